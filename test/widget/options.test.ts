/**
 * The embed options: `data-*` attributes and `Slotwise.mount()`'s object are read by one set
 * of rules, so an attribute and a script's value of the same option mean the same.
 */
import { describe, expect, it } from "vitest"
import { optionsFromAttributes, readOptions } from "../../widget/options.js"

/** An element as the reader sees it: only its `dataset` (what `data-*` attributes become). */
const element = (dataset: Record<string, string>): HTMLElement => ({ dataset }) as unknown as HTMLElement

describe("widget options", () => {
  it("reads every option from its kebab-case attribute, prefill fields included", () => {
    const options = optionsFromAttributes(element({
      key: "pk_test_1",
      service: "svc_1",
      staff: "any",
      baseUrl: "https://api.example",
      primaryColor: "#112233",
      fontFamily: "Georgia",
      radius: "12",
      theme: "dark",
      locale: "de-AT",
      hideBranding: "",
      manageToken: "mt_1",
      prefillName: "Ada",
      prefillEmail: "ada@example.com",
      unrelated: "ignored"
    }))
    expect(options).toEqual({
      key: "pk_test_1",
      service: "svc_1",
      staff: "any",
      base_url: "https://api.example",
      primary_color: "#112233",
      font_family: "Georgia",
      radius: "12",
      theme: "dark",
      locale: "de-AT",
      hide_branding: true,
      manage_token: "mt_1",
      prefill: { name: "Ada", email: "ada@example.com" }
    })
  })

  it("leaves out what is absent or not one of the allowed values", () => {
    expect(optionsFromAttributes(element({ key: "pk_test_1", theme: "purple", hideBranding: "false" })))
      .toEqual({ key: "pk_test_1", hide_branding: false, prefill: {} })
  })

  it("reads a script's options by the same rules: wrong types are left out, numbers and booleans kept where allowed", () => {
    expect(readOptions({
      key: "pk_test_1",
      service: 42,
      radius: 8,
      theme: "auto",
      hide_branding: false,
      locale: null,
      prefill: { email: "a@example.com", phone: 123 },
      extra: "ignored"
    })).toEqual({ key: "pk_test_1", radius: 8, theme: "auto", hide_branding: false, prefill: { email: "a@example.com" } })
    expect(readOptions({ theme: "purple", radius: true, hide_branding: "false" })).toEqual({ hide_branding: false })
    expect(readOptions(undefined)).toEqual({})
    expect(readOptions(null)).toEqual({})
  })
})
