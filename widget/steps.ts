/** Each step's view: service and staff choices, the day-and-time step with its zone picker, and the dispatch over steps. */
import { calendar } from "./calendar.js"
import { doneView } from "./confirmation.js"
import { detailsView } from "./details.js"
import { h } from "./dom.js"
import { formatSlot, price, zoneLabel } from "./format.js"
import { alert, header, stepsShown } from "./header.js"
import { pickSlot } from "./hold.js"
import { cancelView, manageView, moveView } from "./manage.js"
import { ANY } from "./options.js"
import { isTimeZone, timeZones } from "./time.js"
import { timesView } from "./times.js"
import type { WidgetHost } from "./host.js"

/** What this module reads of the widget, and how it reports back. */
type Host = Pick<
  WidgetHost,
  | "afterService"
  | "announce"
  | "apply"
  | "baseUrl"
  | "blobUrl"
  | "body"
  | "client"
  | "enterDate"
  | "fail"
  | "focusAfter"
  | "formats"
  | "go"
  | "host"
  | "intl"
  | "lang"
  | "linkInvalid"
  | "monthSlotsFor"
  | "options"
  | "render"
  | "renewal"
  | "run"
  | "showMonth"
  | "slotCache"
  | "staffNames"
  | "state"
  | "t"
  | "zone"
  | "zonePicker"
>

export const view = (w: Host): Array<Node> => {
  const { busy, problem, step } = w.state
  switch (step._tag) {
    case "loading":
      return [
        h("h2", { tabindex: "-1" }, w.t("loading")),
        ...(busy !== undefined && busy !== w.t("loading") ? [h("p", { class: "muted", role: "status" }, busy)] : []),
        ...(problem !== undefined ? [alert(w, problem)] : [])
      ]
    case "fatal":
      // The step is entered with its problem, which carries no retry.
      return [h("h2", { tabindex: "-1" }, w.t("error_heading")), alert(w, problem!)]
    case "service":
      return serviceView(w)
    case "staff":
      return staffView(w)
    case "date":
      return dateView(w)
    case "details":
      return detailsView(w)
    case "done":
      return doneView(w, step)
    case "manage":
      return manageView(w)
    case "cancel":
      return cancelView(w)
    case "move":
      return moveView(w, step)
  }
}

const serviceView = (w: Host): Array<Node> => [
  ...header(w, w.t("service_heading")),
  h(
    "ul",
    { class: "choices" },
    w.state.services.map((service) =>
      h(
        "li",
        {},
        h(
          "button",
          {
            type: "button",
            class: "choice",
            "data-focus": `svc-${service.id}`,
            "data-service": service.id,
            onclick: () => {
              w.apply({ _tag: "ServiceChosen", service })
              w.run(() => w.afterService(true))
            }
          },
          h(
            "span",
            {},
            h("strong", {}, service.name),
            service.description ? h("span", { class: "muted" }, ` · ${service.description}`) : null
          ),
          h("span", { class: "muted" }, [w.t("minutes", { n: service.duration_minutes }), price(w, service)].filter(Boolean).join(" · "))
        )
      )
    )
  )
]

const staffView = (w: Host): Array<Node> => {
  const choose = (id: string) => () => {
    w.apply({ _tag: "StaffChosen", staff: id })
    w.run(() => w.enterDate(true))
  }
  return [
    ...header(w, w.t("staff_heading"), w.options.service === undefined ? shown(w, "service") : undefined),
    h(
      "ul",
      { class: "choices" },
      h(
        "li",
        {},
        h(
          "button",
          { type: "button", class: "choice", "data-focus": "stf-any", "data-staff": ANY, onclick: choose(ANY) },
          h("strong", {}, w.t("anyone"))
        )
      ),
      w.state.staffList.map((member) =>
        h(
          "li",
          {},
          h("button", {
            type: "button",
            class: "choice",
            "data-focus": `stf-${member.id}`,
            "data-staff": member.id,
            onclick: choose(member.id)
          }, member.name)
        )
      )
    )
  ]
}

const shown = (w: Host, step: "service" | "staff" | "manage") => () => w.go({ _tag: "Shown", step })

const backFromDate = (w: Host): (() => void) | undefined => {
  if (w.state.managed !== undefined) return shown(w, "manage")
  if (stepsShown(w).includes("staff")) return shown(w, "staff")
  if (w.options.service === undefined) return shown(w, "service")
  return undefined
}

const dateView = (w: Host): Array<Node> => {
  const { alternatives, notice, service } = w.state
  const nodes = header(w, w.t("date_heading"), backFromDate(w))
  if (service !== undefined) {
    nodes.push(h("p", { class: "muted" }, `${service.name} · ${w.t("minutes", { n: service.duration_minutes })}`))
  }
  if (notice !== undefined) {
    nodes.push(h(
      "div",
      { class: "notice", role: "group", "aria-label": w.t("alternatives") },
      h("p", {}, notice),
      alternatives.length === 0 ? null : h(
        "ul",
        { class: "choices" },
        alternatives.map((slot, i) =>
          h(
            "li",
            {},
            h("button", {
              type: "button",
              class: "choice",
              "data-focus": `alt-${i}`,
              "data-alternative": slot.start,
              onclick: () => void pickSlot(w, slot)
            }, formatSlot(w, slot))
          )
        )
      )
    ))
  }
  nodes.push(h("label", { for: "tz" }, w.t("time_zone")), zoneSelect(w))
  nodes.push(h("div", { class: "layout" }, h("div", {}, calendar(w)), h("div", {}, timesView(w))))
  return nodes
}

/**
 * The zone picker: ~400 options, so built once and kept across renders, and filled only when
 * the visitor reaches it (focus comes before any key or click), off the path to first times.
 */
export const fillZones = (w: Host): void => {
  const select = w.zonePicker
  if (select === undefined || select.options.length > 1) return
  select.replaceChildren(...timeZones(w.zone).map((zone) => h("option", { value: zone }, zoneLabel(zone))))
  select.value = w.zone
}

const zoneSelect = (w: Host): HTMLSelectElement => {
  if (w.zonePicker === undefined) {
    const fill = () => fillZones(w)
    w.zonePicker = h("select", {
      id: "tz",
      "data-focus": "tz",
      onfocus: fill,
      onpointerdown: fill,
      onchange: (event: Event) => {
        const zone = (event.target as HTMLSelectElement).value
        if (!isTimeZone(zone)) return
        w.apply({ _tag: "ZoneChanged", zone })
        w.focusAfter = "#tz"
        w.render()
        w.announce(`${w.t("time_zone")}: ${zone}`)
      }
    })
  }
  if (w.zonePicker.options.length <= 1) w.zonePicker.replaceChildren(h("option", { value: w.zone }, zoneLabel(w.zone)))
  w.zonePicker.value = w.zone
  return w.zonePicker
}
