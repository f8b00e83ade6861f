/**
 * The sign-in, consent and error pages: server-rendered HTML, no scripts, no third-party
 * assets; one inline stylesheet allowed by its hash; light and dark by prefers-color-scheme.
 */
import { createHash } from "node:crypto"
import type { ServerResponse } from "node:http"

const STYLE = `
:root{color-scheme:light dark;--bg:#f6f7f9;--card:#fff;--text:#1b1f24;--muted:#5b6470;--line:#d8dde3;--accent:#2454d6;--accent-text:#fff;--danger:#b42318}
@media (prefers-color-scheme:dark){:root{--bg:#111418;--card:#1b2027;--text:#e8ebef;--muted:#a3acb8;--line:#323a45;--accent:#6d95ff;--accent-text:#0b1020;--danger:#ff8a80}}
*{box-sizing:border-box}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;background:var(--bg);color:var(--text);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{width:100%;max-width:26rem;margin:1.5rem;padding:2rem;background:var(--card);border:1px solid var(--line);border-radius:12px}
h1{font-size:1.35rem;margin:0 0 .25rem}
p{margin:.5rem 0}
.muted{color:var(--muted);font-size:.93rem}
label{display:block;margin:1rem 0 .3rem;font-weight:600}
input{width:100%;padding:.6rem .7rem;font:inherit;color:var(--text);background:var(--bg);border:1px solid var(--line);border-radius:8px}
input:focus,button:focus{outline:2px solid var(--accent);outline-offset:2px}
ul{padding-left:1.2rem;margin:.5rem 0 1rem}
li{margin:.25rem 0}
code{font-size:.85em;color:var(--muted)}
.env{display:inline-block;padding:.05rem .5rem;border-radius:999px;border:1px solid var(--line);font-size:.85rem}
.error{color:var(--danger);font-weight:600}
.actions{display:flex;gap:.75rem;margin-top:1.5rem}
.actions form{flex:1;display:flex}
button{flex:1;padding:.65rem 1rem;font:inherit;font-weight:600;border-radius:8px;border:1px solid var(--line);background:var(--card);color:var(--text);cursor:pointer}
button.primary{background:var(--accent);border-color:var(--accent);color:var(--accent-text)}
`.trim()

const STYLE_HASH = `'sha256-${createHash("sha256").update(STYLE).digest("base64")}'`

/**
 * No scripts, no frames, the one stylesheet above, forms only to this origin. Chromium
 * applies form-action to every redirect that follows a submission, and the last one goes
 * back to the client: the pages of an authorization request also allow its (registered,
 * exactly matched) redirect URI.
 */
export const contentSecurityPolicy = (redirectUri?: string): string => {
  let target = ""
  if (redirectUri !== undefined) {
    try {
      const url = new URL(redirectUri)
      const source = url.protocol === "http:" || url.protocol === "https:" ? `${url.origin}${url.pathname}` : url.protocol
      if (/^[^\s;,']+$/.test(source)) target = ` ${source}`
    } catch {
      target = ""
    }
  }
  return `default-src 'none'; style-src ${STYLE_HASH}; form-action 'self'${target}; frame-ancestors 'none'; base-uri 'none'`
}

export const CONTENT_SECURITY_POLICY = contentSecurityPolicy()

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
}

export const escapeHtml = (value: unknown): string =>
  String(value).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

export const layout = (title: string, body: string): string =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · Slotwise</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`

export const sendHtml = (res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { ...SECURITY_HEADERS, "content-type": "text/html; charset=utf-8", ...headers })
  res.end(html)
}

export interface SignInView {
  readonly action: string
  readonly csrf: string
  readonly clientName: string
  readonly email?: string | undefined
  readonly error?: string | undefined
}

export const signInPage = (view: SignInView): string =>
  layout(
    "Sign in",
    `
<h1>Sign in</h1>
<p class="muted">to let <strong>${escapeHtml(view.clientName)}</strong> use your Slotwise account.</p>
${view.error !== undefined ? `<p class="error" role="alert">${escapeHtml(view.error)}</p>` : ""}
<form method="post" action="${escapeHtml(view.action)}" autocomplete="on">
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" required autocomplete="username" value="${escapeHtml(view.email ?? "")}"${
      view.email === undefined ? " autofocus" : ""
    }>
<label for="password">Password</label>
<input id="password" name="password" type="password" required autocomplete="current-password"${
      view.email !== undefined ? " autofocus" : ""
    }>
<div class="actions"><button class="primary" type="submit">Sign in</button></div>
</form>`
  )

export interface ConsentView {
  readonly action: string
  readonly abort: string
  readonly csrf: string
  readonly clientName: string
  readonly environment: "sandbox" | "production"
  readonly userEmail: string
  readonly scopes: ReadonlyArray<{ readonly scope: string; readonly description: string }>
}

export const consentPage = (view: ConsentView): string =>
  layout(
    "Allow access",
    `
<h1>Allow ${escapeHtml(view.clientName)}?</h1>
<p class="muted">Signed in as ${escapeHtml(view.userEmail)}</p>
<p><strong>${escapeHtml(view.clientName)}</strong> asks to use your account's
<span class="env">${view.environment === "production" ? "production (live data)" : "sandbox (test data)"}</span> environment to:</p>
<ul>
${view.scopes.map((s) => `<li>${escapeHtml(s.description)} <code>${escapeHtml(s.scope)}</code></li>`).join("\n")}
</ul>
<p class="muted">You can revoke this at any time.</p>
<div class="actions">
<form method="post" action="${escapeHtml(view.abort)}"><input type="hidden" name="csrf" value="${
      escapeHtml(view.csrf)
    }"><button type="submit">Deny</button></form>
<form method="post" action="${escapeHtml(view.action)}"><input type="hidden" name="csrf" value="${
      escapeHtml(view.csrf)
    }"><button class="primary" type="submit">Allow</button></form>
</div>`
  )

export const errorPage = (title: string, detail: string, code?: string): string =>
  layout(
    title,
    `
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(detail)}</p>
${code !== undefined ? `<p class="muted"><code>${escapeHtml(code)}</code></p>` : ""}`
  )
