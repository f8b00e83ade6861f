/** The widget's one DOM helper: elements built from props and children, no framework. */

export type Child = Node | string | null | undefined | false
export type Props = Record<string, string | number | boolean | null | undefined | ((event: any) => void)>

/** A DOM element: `on…` props become listeners, `value` a property, the rest attributes. Never `style`. */
export const h = <K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Array<Child | Array<Child>>) => {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue
    if (typeof value === "function") el.addEventListener(name.slice(2), value)
    else if (name === "value") (el as HTMLInputElement).value = String(value)
    else el.setAttribute(name, value === true ? "" : String(value))
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue
    el.append(child)
  }
  return el
}
