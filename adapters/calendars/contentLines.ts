/**
 * A feed's content lines, read before ical.js sees them: only those busy time depends on are
 * kept (most of a feed's bytes are descriptions and attendees), each within the line limits
 * (length, parameters), with its `BEGIN`s matched with `END`s and each component marked with
 * the line it begins on, so that a refusal names the line and never quotes it.
 */
/** Why a feed's text is not usable, in words: where (a line) and what, never the feed's content. */
export class FeedParseError extends Error {}

/** The longest content line kept for ical.js (unfolded): an `EXDATE` of ~3,500 dates. */
export const MAX_LINE_CHARS = 64 * 1024
/** Parameters on one content line (a start time has one or two). */
export const MAX_LINE_PARAMETERS = 20

export const formatCount = (n: number) => n.toLocaleString("en-US")

/**
 * The property ical.js sees first in each component, carrying the line its `BEGIN` is on in
 * the feed: what a refusal names (the name cannot occur in a feed: it is not kept).
 */
export const LINE_PROPERTY = "X-SLOTWISE-LINE"

/**
 * The properties busy time depends on (events, their recurrence, and the zones they name);
 * everything else (descriptions, attendees, alarms' text, X- properties) is most of a feed's
 * bytes and would only be parsed to be thrown away.
 */
const NEEDED_PROPERTIES = new Set([
  "BEGIN",
  "END",
  "UID",
  "DTSTART",
  "DTEND",
  "DURATION",
  "RRULE",
  "RDATE",
  "EXDATE",
  "RECURRENCE-ID",
  "TRANSP",
  "STATUS",
  "TZID",
  "TZOFFSETFROM",
  "TZOFFSETTO"
])

/** Where a content line breaks the rules ical.js relies on, in words that quote none of it; `undefined` when it does not. */
const lineProblem = (pieces: ReadonlyArray<string>): string | undefined => {
  let length = 0
  let parameters = 0
  let inQuote = false
  let parameterStart = -1
  let sawEquals = false
  for (let p = 0; p < pieces.length; p++) {
    const piece = pieces[p]!
    length += piece.length
    if (length > MAX_LINE_CHARS) return `a content line longer than ${formatCount(MAX_LINE_CHARS)} characters`
    // A continuation's first character (a space or a tab) is the fold, not content.
    for (let i = p === 0 ? 0 : 1; i < piece.length; i++) {
      const c = piece.charCodeAt(i)
      if (c === 34) inQuote = !inQuote
      else if (inQuote) continue
      else if (c === 61 && parameterStart !== -1 && !sawEquals) {
        if (i === parameterStart) return "a parameter without a name"
        sawEquals = true
      } else if (c === 59 || c === 58) {
        if (parameterStart !== -1 && !sawEquals) return "a parameter without a value"
        if (c === 58) return undefined
        if (++parameters > MAX_LINE_PARAMETERS) return `a content line with more than ${MAX_LINE_PARAMETERS} parameters`
        parameterStart = i + 1
        sawEquals = false
      }
    }
  }
  return inQuote ? "a quoted parameter value that does not end" : "a content line without \":\" (no value)"
}

interface ScannedFeed {
  /** The kept lines, each component's first property saying the line its `BEGIN` is on. */
  readonly text: string
  /** The number of the first feed line that contains `fragment`, or 0. */
  readonly lineContaining: (fragment: string) => number
}

/**
 * The feed's content lines that `NEEDED_PROPERTIES` name, with their folded continuations,
 * each checked against the line limits, and `BEGIN`s matched with `END`s: a refusal names the
 * line. A line whose name cannot be read is kept, so that it is refused.
 */
export const scanFeed = (body: string): ScannedFeed => {
  const kept: Array<string> = []
  /** Each kept logical line's first physical line and where its pieces start in `kept`. */
  const keptLines: Array<number> = []
  const keptFrom: Array<number> = []
  const open: Array<{ readonly name: string; readonly line: number }> = []
  let pieces: Array<string> = []
  let first = 0
  let name = ""
  const close = () => {
    if (pieces.length === 0) return
    const problem = lineProblem(pieces)
    if (problem !== undefined) throw new FeedParseError(`line ${first}: ${problem}`)
    keptLines.push(first)
    keptFrom.push(kept.length)
    for (const piece of pieces) kept.push(piece, "\r\n")
    if (name === "BEGIN" || name === "END") {
      const value = pieces.join("").slice(name.length + 1).trim().toUpperCase()
      if (name === "BEGIN") {
        open.push({ name: value, line: first })
        kept.push(`${LINE_PROPERTY}:${first}\r\n`)
      } else {
        const top = open.pop()
        if (top === undefined) throw new FeedParseError(`line ${first}: an END without its BEGIN`)
        if (top.name !== value) throw new FeedParseError(`line ${top.line}: a component that begins and does not end`)
      }
    }
    pieces = []
  }
  let line = 0
  let keep = false
  let from = 0
  while (from < body.length) {
    let to = body.indexOf("\n", from)
    if (to === -1) to = body.length
    line++
    const end = to > from && body.charCodeAt(to - 1) === 13 ? to - 1 : to
    const c = body.charCodeAt(from)
    // A line starting with a space or a tab continues the one before (RFC 5545 §3.1).
    if (end > from && (c === 32 || c === 9)) {
      if (keep) pieces.push(body.slice(from, end))
    } else {
      close()
      keep = false
      if (end > from) {
        let nameEnd = from
        while (nameEnd < end && body.charCodeAt(nameEnd) !== 58 && body.charCodeAt(nameEnd) !== 59) nameEnd++
        name = body.slice(from, nameEnd).toUpperCase()
        keep = nameEnd === end || NEEDED_PROPERTIES.has(name)
        if (keep) {
          first = line
          pieces.push(body.slice(from, end))
        }
      }
    }
    from = to + 1
  }
  close()
  if (open.length > 0) throw new FeedParseError(`line ${open.at(-1)!.line}: a component that begins and does not end`)
  return {
    text: kept.join(""),
    lineContaining: (fragment) => {
      for (let i = 0; i < keptLines.length; i++) {
        const pieceEnd = i + 1 < keptFrom.length ? keptFrom[i + 1]! : kept.length
        const unfolded = kept.slice(keptFrom[i]!, pieceEnd).filter((piece) => piece !== "\r\n").map((piece, n) =>
          n === 0 ? piece : piece.slice(1)
        ).join("")
        if (unfolded.includes(fragment)) return keptLines[i]!
      }
      return 0
    }
  }
}

/** The kept lines of a feed (what ical.js is given), without the line numbers. */
export const neededLines = (body: string): string => scanFeed(body).text.replace(new RegExp(`^${LINE_PROPERTY}:\\d+\r\n`, "gm"), "")
