/**
 * Real Chromium for the browser tests: Debian's package at /usr/bin/chromium (or the binary
 * named by SLOTWISE_TEST_CHROMIUM), driven by playwright-core. Nothing is downloaded, and a
 * missing browser fails the suite with a message saying how to install it, never a skip.
 */
import * as fs from "node:fs"
import { type Browser, chromium } from "playwright-core"

export const chromiumPath = process.env["SLOTWISE_TEST_CHROMIUM"] || "/usr/bin/chromium"

export const launchChromium = async (): Promise<Browser> => {
  if (!fs.existsSync(chromiumPath)) {
    throw new Error(
      `Chromium not found at ${chromiumPath}: install it (apt-get install chromium) or set SLOTWISE_TEST_CHROMIUM`
    )
  }
  return chromium.launch({
    executablePath: chromiumPath,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run"
    ]
  })
}
