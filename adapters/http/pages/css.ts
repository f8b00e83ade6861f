/**
 * The hosted pages' style sheet, served as `/pages.css` (a file of its own: the pages' CSP
 * allows no inline style). Light and dark follow the visitor's system unless the page names
 * a theme (`<html data-theme>`); the widget inside has its own sheet.
 */
export const PAGES_CSS = `:root{color-scheme:light dark;--bg:#f8fafc;--fg:#111827;--muted:#4b5563;--card:#fff;--line:#d1d5db;--link:#1d4ed8}
@media (prefers-color-scheme:dark){:root:not([data-theme=light]){--bg:#0b1120;--fg:#f3f4f6;--muted:#cbd5e1;--card:#111827;--line:#374151;--link:#93c5fd}}
:root[data-theme=dark]{color-scheme:dark;--bg:#0b1120;--fg:#f3f4f6;--muted:#cbd5e1;--card:#111827;--line:#374151;--link:#93c5fd}
:root[data-theme=light]{color-scheme:light}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
a{color:var(--link)}
a:focus-visible{outline:3px solid var(--fg);outline-offset:2px}
.skip{position:absolute;left:-9999px}
.skip:focus{left:1rem;top:1rem;background:var(--card);padding:.5rem 1rem}
header,main,footer{max-width:44rem;margin:0 auto;padding:0 1rem}
header{display:flex;align-items:center;gap:.75rem;padding-top:1.5rem}
header img{height:2.5rem;width:auto;border-radius:.25rem}
header .account{font-weight:700;font-size:1.125rem;margin:0}
h1{font-size:1.75rem;line-height:1.2;margin:1rem 0}
.lead{color:var(--muted);margin-top:-.5rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:1rem 1.25rem}
.services{list-style:none;margin:0;padding:0;display:grid;gap:.75rem}
.services a{display:flex;justify-content:space-between;gap:1rem;text-decoration:none;color:inherit;background:var(--card);border:1px solid var(--line);border-radius:12px;padding:1rem 1.25rem}
.services a:hover{border-color:var(--link)}
.services .name{font-weight:600;color:var(--link);text-decoration:underline}
.services .meta{color:var(--muted);white-space:nowrap}
.services .description{display:block;color:var(--muted);font-size:.875rem}
.badge{display:inline-block;border:1px solid var(--line);border-radius:999px;padding:0 .5rem;font-size:.75rem;color:var(--muted)}
footer{color:var(--muted);font-size:.875rem;padding-top:2rem;padding-bottom:2rem}
footer a{color:var(--muted)}
`
