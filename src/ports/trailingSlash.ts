/**
 * A base URL or path prefix without its trailing slashes, so that `${base}/path` never
 * doubles one: the server's public URL, a mount prefix, an OAuth issuer, the widget's API
 * origin. The widget bundles this module, so it imports nothing.
 */
export const withoutTrailingSlash = (url: string): string => url.replace(/\/+$/, "")
