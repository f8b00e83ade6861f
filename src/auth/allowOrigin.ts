/**
 * How an account allows a web page's origin for its publishable keys: the words every refusal
 * of an origin ends with, the server's problems and the widget's console alike (the widget
 * bundles this module, so it imports nothing).
 */
export const howToAllowOrigin = (origin: string, accountId = "acc_…"): string =>
  `allow it with \`slotwise accounts update ${accountId} --allowed-origin ${origin}\` ` +
  `(the flag replaces the list: repeat it for every origin to keep), or with a secret key, ` +
  `PATCH /v1/account {"allowed_origins": [..., "${origin}"]}`
