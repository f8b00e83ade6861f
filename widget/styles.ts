/**
 * The widget's styles, adopted by its shadow root as constructed stylesheets: no <style>
 * element and no style attribute, so a host page's CSP needs no 'unsafe-inline'. Colours meet
 * WCAG AA in both themes; the host's appearance options arrive as custom properties.
 */
export const BASE_CSS = `
:host{display:block}
.sw{--sw-bg:#fff;--sw-fg:#111827;--sw-muted:#4b5563;--sw-line:#6b7280;--sw-soft:#eef2ff;--sw-error:#b91c1c;--sw-error-bg:#fef2f2;
 box-sizing:border-box;max-width:42rem;margin:0 auto;padding:1.25rem;background:var(--sw-bg);color:var(--sw-fg);
 font-family:var(--sw-font,system-ui,-apple-system,"Segoe UI",Roboto,sans-serif);font-size:1rem;line-height:1.5;
 border:1px solid var(--sw-line);border-radius:var(--sw-radius,8px);container-type:inline-size}
.sw[data-theme=dark]{--sw-bg:#111827;--sw-fg:#f9fafb;--sw-muted:#d1d5db;--sw-line:#9ca3af;--sw-soft:#1e293b;--sw-error:#fecaca;--sw-error-bg:#450a0a}
.sw *,.sw *::before,.sw *::after{box-sizing:border-box}
h2{font-size:1.25rem;margin:0 0 .25rem;line-height:1.3}
h2:focus,#month:focus,.notice:focus{outline:none}
h3{font-size:1rem;margin:1rem 0 .5rem}
p{margin:.25rem 0 .75rem}
.muted{color:var(--sw-muted);font-size:.875rem}
.sr{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
button,input,select,textarea,a{font:inherit;color:inherit}
button{cursor:pointer;border-radius:var(--sw-radius,8px)}
:is(button,input,select,textarea,a):focus-visible{outline:3px solid var(--sw-fg);outline-offset:2px}
.primary{background:var(--sw-primary);color:var(--sw-on-primary);border:1px solid var(--sw-primary);padding:.625rem 1.25rem;font-weight:600}
.secondary{background:transparent;border:1px solid var(--sw-line);padding:.5rem 1rem}
.link{background:none;border:none;padding:.25rem 0;text-decoration:underline;color:var(--sw-fg)}
.choices{list-style:none;margin:0;padding:0;display:grid;gap:.5rem}
.choice{display:flex;width:100%;justify-content:space-between;gap:1rem;text-align:start;background:transparent;border:1px solid var(--sw-line);padding:.75rem 1rem}
.choice:hover{background:var(--sw-soft)}
.row{display:flex;flex-wrap:wrap;gap:.75rem;align-items:center;justify-content:space-between}
.brand{display:flex;align-items:center;gap:.5rem;margin-bottom:.5rem;font-weight:600}
.brand .logo{max-height:2rem;max-width:8rem;object-fit:contain}
.top{display:flex;justify-content:space-between;align-items:baseline;gap:1rem}
.badge{font-size:.75rem;border:1px solid var(--sw-line);border-radius:999px;padding:0 .5rem}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
select,input,textarea{width:100%;background:var(--sw-bg);border:1px solid var(--sw-line);border-radius:var(--sw-radius,8px);padding:.5rem .625rem}
textarea{min-height:4.5rem;resize:vertical}
[aria-invalid=true]{border:2px solid var(--sw-error)}
.field-error{color:var(--sw-error);font-size:.875rem;margin:.25rem 0 0}
fieldset{border:0;margin:0;padding:0;min-width:0}
legend{font-weight:600;margin:.75rem 0 .25rem;padding:0}
.check{display:flex;gap:.5rem;align-items:center;font-weight:400;margin:.25rem 0}
.check input{width:auto;margin:0}
.hint{margin:.25rem 0 0}
.solo{margin-top:.75rem}
.alert{background:var(--sw-error-bg);color:var(--sw-error);border:1px solid var(--sw-error);border-radius:var(--sw-radius,8px);padding:.75rem 1rem;margin:.75rem 0}
.alert p{margin:0 0 .5rem}
.alert p:last-child{margin:0}
.notice{border:1px solid var(--sw-line);border-radius:var(--sw-radius,8px);padding:.5rem .75rem;margin:.75rem 0}
.layout{display:grid;gap:1rem;grid-template-columns:minmax(0,1fr)}
@container (min-width:36rem){.layout{grid-template-columns:minmax(0,1.2fr) minmax(0,1fr)}}
.calhead{display:flex;align-items:center;justify-content:space-between;margin:.75rem 0 .25rem}
.calhead strong{font-size:1rem}
.nav{background:transparent;border:1px solid var(--sw-line);width:2.5rem;height:2.5rem;font-size:1.25rem;line-height:1}
.nav[aria-disabled=true]{opacity:.5;cursor:default}
table{border-collapse:collapse;width:100%;table-layout:fixed}
th{font-size:.75rem;font-weight:600;color:var(--sw-muted);padding:.25rem 0;text-align:center}
td{padding:2px;text-align:center}
.day{width:100%;min-height:2.5rem;border:1px solid transparent;background:transparent;color:var(--sw-muted);position:relative}
.day.free{background:var(--sw-soft);color:var(--sw-fg);font-weight:700;border-color:var(--sw-line)}
.day.free::after{content:"";position:absolute;left:50%;bottom:.25rem;width:.3rem;height:.3rem;margin-left:-.15rem;border-radius:50%;background:var(--sw-fg)}
[aria-selected=true]>.day{background:var(--sw-primary);color:var(--sw-on-primary);border-color:var(--sw-primary)}
[aria-selected=true]>.day::after{background:var(--sw-on-primary)}
.day[aria-disabled=true]{cursor:default}
.today{text-decoration:underline}
.times{display:grid;grid-template-columns:repeat(auto-fill,minmax(6rem,1fr));gap:.5rem;margin:0;padding:0;list-style:none}
.time{width:100%;padding:.5rem;background:transparent;border:1px solid var(--sw-primary-line);font-weight:600}
.time:hover{background:var(--sw-soft)}
.summary{border-inline-start:4px solid var(--sw-primary);padding:.25rem .75rem;margin:.5rem 0 1rem}
dl.summary{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}
dl.summary dt{font-weight:600}
dl.summary dd{margin:0;overflow-wrap:anywhere}
.actions{display:flex;gap:.75rem;flex-wrap:wrap;margin-top:1rem;align-items:center}
.footer{margin-top:1rem;font-size:.75rem;color:var(--sw-muted);text-align:end}
.footer a{color:var(--sw-muted)}
.ok::before{content:"✓" / "";margin-inline-end:.5rem}
.probe{color:var(--sw-primary)}
.repeat{margin-bottom:.5rem}
.dates{margin:.25rem 0 .75rem;padding-inline-start:1.25rem}
`

/**
 * The instance's appearance as custom properties. Values come from the host page's options,
 * so each is checked with CSS.supports first: a value that is not a colour, font list or
 * length is dropped, and nothing can break out of its declaration.
 */
export const appearanceCss = (options: {
  readonly primary: string
  readonly onPrimary: string
  readonly primaryLine: string
  readonly font: string | undefined
  readonly radius: string | undefined
}): string => {
  const decls = [
    `--sw-primary:${options.primary}`,
    `--sw-on-primary:${options.onPrimary}`,
    `--sw-primary-line:${options.primaryLine}`
  ]
  if (options.font !== undefined) decls.push(`--sw-font:${options.font}`)
  if (options.radius !== undefined) decls.push(`--sw-radius:${options.radius}`)
  return `.sw{${decls.join(";")}}`
}

const supports = (property: string, value: string): boolean =>
  !/[;{}<>\\]/.test(value) && typeof CSS !== "undefined" && CSS.supports(property, value)

export const safeColor = (value: string | undefined): string | undefined =>
  value !== undefined && supports("color", value) ? value : undefined
export const safeFont = (value: string | undefined): string | undefined =>
  value !== undefined && supports("font-family", value) ? value : undefined
/** `radius`: a number is pixels; otherwise a CSS length. */
export const safeRadius = (value: string | number | undefined): string | undefined => {
  if (value === undefined || value === "") return undefined
  const text = typeof value === "number" || /^\d+(\.\d+)?$/.test(value) ? `${value}px` : value
  return supports("border-radius", text) ? text : undefined
}

/** sRGB relative luminance of `rgb(r, g, b)` as getComputedStyle reports it. */
export const luminance = (rgb: string): number | undefined => {
  const m = /rgba?\(\s*([\d.]+)[ ,]+([\d.]+)[ ,]+([\d.]+)/.exec(rgb)
  if (m === null) return undefined
  const [r, g, b] = [m[1], m[2], m[3]].map((c) => {
    const v = Number(c) / 255
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4
  }) as [number, number, number]
  return 0.2126 * r + 0.7152 * g + 0.0722 * b
}

export const contrast = (a: number, b: number): number => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)
