/**
 * What tops every step: the account's logo and display name (its branding), progress
 * ("Step 2 of 4"), the test-mode badge, heading, busy line, alert and back link.
 */
import { h } from "./dom.js"
import type { Problem, StepName } from "./state.js"
import type { WidgetHost } from "./host.js"

/** What this module reads of the widget, and how it reports back. */
type Host = Pick<WidgetHost, "apply" | "options" | "state" | "t">

/** The steps this configuration shows, in order: a preset service or staff member skips its step. */
export const stepsShown = (w: Host): Array<StepName> => {
  const steps: Array<StepName> = []
  // Managing a booking is not a numbered flow.
  if (w.options.manage_token !== undefined) return steps
  if (w.options.service === undefined) steps.push("service")
  if (w.state.staffList.length > 1 && w.options.staff === undefined) steps.push("staff")
  steps.push("date", "details", "done")
  return steps
}

export const progress = (w: Host): string | undefined => {
  const steps = stepsShown(w)
  const index = steps.indexOf(w.state.step._tag)
  return index < 0 ? undefined : w.t("step", { n: index + 1, total: steps.length })
}

/** The account's logo and display name, when its branding sets them; the logo's alt text is the name. */
const brand = (w: Host): HTMLElement | null => {
  const config = w.state.config
  const name = config?.display_name ?? undefined
  const logo = config?.logo_url ?? undefined
  if (name === undefined && logo === undefined) return null
  return h(
    "div",
    { class: "brand" },
    logo === undefined ? null : h("img", { src: logo, alt: name ?? config!.account_name, referrerpolicy: "no-referrer", class: "logo" }),
    name === undefined ? null : h("span", { class: "brand-name" }, name)
  )
}

export const header = (w: Host, title: string, back?: () => void, headingClass?: string): Array<Node> => {
  const top = h(
    "div",
    { class: "top" },
    h("span", { class: "muted" }, progress(w) ?? ""),
    w.state.config?.environment === "sandbox" ? h("span", { class: "badge" }, w.t("test_mode")) : null
  )
  const nodes: Array<Node> = [top, h("h2", { tabindex: "-1", class: headingClass }, title)]
  const brandRow = brand(w)
  if (brandRow !== null) nodes.unshift(brandRow)
  const { busy, problem, step } = w.state
  if (busy !== undefined) nodes.push(h("p", { class: "muted", role: "status" }, busy))
  if (problem !== undefined && step._tag !== "fatal") nodes.push(alert(w, problem))
  if (back !== undefined) {
    nodes.push(h("p", {}, h("button", { type: "button", class: "link", "data-focus": "back", onclick: back }, `← ${w.t("back")}`)))
  }
  return nodes
}

export const alert = (w: Host, problem: Problem): HTMLElement =>
  h(
    "div",
    { class: "alert", role: "alert" },
    h("p", {}, problem.message),
    problem.retry === undefined ? null : h(
      "p",
      {},
      h("button", {
        type: "button",
        class: "secondary",
        "data-focus": "retry",
        onclick: () => {
          w.apply({ _tag: "ProblemCleared" })
          problem.retry!()
        }
      }, w.t("retry"))
    )
  )
