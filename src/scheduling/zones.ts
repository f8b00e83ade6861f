/**
 * Local wall-clock ↔ UTC for IANA zones, DST-correct and fast.
 *
 * The zone's UTC offset is read from `Intl.DateTimeFormat` (one cached formatter per zone),
 * but only at UTC midnights, each read once per (zone, day) and kept in a module-level
 * cache. A local date whose surrounding offsets agree is converted with plain arithmetic;
 * only when they differ (a few days a year) the transition instant is found by bisection,
 * once, and cached too.
 *
 * Conventions (docs/api.md §3): a wall-clock time inside a spring-forward gap maps to the first
 * instant after the gap, so a window whose start or end falls in the gap is shortened and
 * never offered inside it; a time inside a fall-back overlap maps to its EARLIER occurrence;
 * minute 1440 of a date is 00:00 of the next date.
 *
 * Assumes at most one offset change within any 72 hours of a zone, true of every zone in
 * the tz database since 1970.
 */

const SECOND = 1_000
const MINUTE = 60_000
const DAY = 86_400_000

// ---------------------------------------------------------------------------------------
// Calendar arithmetic on day numbers (days since 1970-01-01), no Date objects.

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). */
export const daysFromCivil = (year: number, month: number, day: number): number => {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146_097 + doe - 719_468
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`)

/** `YYYY-MM-DD` of a day number. */
export const formatDay = (days: number): string => {
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const doe = z - era * 146_097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1
  const m = mp < 10 ? mp + 3 : mp - 9
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0)
  return `${String(y).padStart(4, "0")}-${pad2(m)}-${pad2(d)}`
}

const digit = (s: string, i: number): number => s.charCodeAt(i) - 48

/** Day number of a validated `YYYY-MM-DD`. */
export const parseDay = (date: string): number =>
  daysFromCivil(
    digit(date, 0) * 1000 + digit(date, 1) * 100 + digit(date, 2) * 10 + digit(date, 3),
    digit(date, 5) * 10 + digit(date, 6),
    digit(date, 8) * 10 + digit(date, 9)
  )

/** ISO weekday (1 = Monday … 7 = Sunday) of a day number. 1970-01-01 was a Thursday. */
export const weekdayOfDay = (days: number): number => ((((days + 3) % 7) + 7) % 7) + 1

export const weekdayOf = (date: string): number => weekdayOfDay(parseDay(date))

export const addDays = (date: string, days: number): string => formatDay(parseDay(date) + days)

// ---------------------------------------------------------------------------------------
// Zone names.

/**
 * Names Intl accepts but leaves out of `Intl.supportedValuesOf("timeZone")`, whose list
 * still has the older spellings (Asia/Calcutta, Europe/Kiev) and no links: their canonical
 * case cannot be read from the runtime.
 */
const UNLISTED_ZONES = [
  "UTC",
  "Etc/UTC",
  "GMT",
  "Etc/GMT",
  "Asia/Kolkata",
  "Asia/Kathmandu",
  "Asia/Ho_Chi_Minh",
  "Asia/Yangon",
  "Europe/Kyiv",
  "America/Nuuk",
  "Pacific/Kanton",
  "Atlantic/Faroe",
  "America/Argentina/Buenos_Aires",
  "US/Pacific",
  "US/Mountain",
  "US/Central",
  "US/Eastern",
  "US/Alaska",
  "US/Hawaii"
]
let spellings: Map<string, string> | undefined
const spellingOf = (name: string): string | undefined => {
  spellings ??= new Map([...Intl.supportedValuesOf("timeZone"), ...UNLISTED_ZONES].map((zone) => [zone.toLowerCase(), zone]))
  return spellings.get(name.toLowerCase())
}

const resolveZone = (name: string): string | undefined => {
  if (name.length > 64) return undefined
  let resolved: string
  try {
    resolved = new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone
  } catch {
    return undefined
  }
  const spelled = spellingOf(name)
  if (spelled !== undefined) return spelled
  // An alias this table does not know (Intl names its target instead): kept as given.
  return resolved.toLowerCase() === name.toLowerCase() ? resolved : name
}

const canonicalZones = new Map<string, string | null>()

/**
 * The IANA zone `name` names, matched case-insensitively, in its canonical case
 * (`europe/berlin` → `Europe/Berlin`); `undefined` when it names none. A link stays a link
 * (`US/Pacific` is not rewritten to `America/Los_Angeles`). Verdicts are cached: asking Intl
 * builds a formatter.
 */
export const canonicalZone = (name: string): string | undefined => {
  let found = canonicalZones.get(name)
  if (found === undefined) {
    found = resolveZone(name) ?? null
    if (canonicalZones.size < 1000) canonicalZones.set(name, found)
  }
  return found ?? undefined
}

// ---------------------------------------------------------------------------------------
// Offsets.

const formatters = new Map<string, Intl.DateTimeFormat>()

const formatterOf = (timeZone: string): Intl.DateTimeFormat => {
  let f = formatters.get(timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      era: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric"
    })
    formatters.set(timeZone, f)
  }
  return f
}

/** The slow path: the zone's offset (ms, local − UTC) at an instant, via Intl. */
const intlOffset = (timeZone: string, ms: number): number => {
  const t = Math.floor(ms / SECOND) * SECOND
  let year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0, bc = false
  for (const part of formatterOf(timeZone).formatToParts(t)) {
    switch (part.type) {
      case "year":
        year = Number(part.value)
        break
      case "month":
        month = Number(part.value)
        break
      case "day":
        day = Number(part.value)
        break
      case "hour":
        hour = Number(part.value)
        break
      case "minute":
        minute = Number(part.value)
        break
      case "second":
        second = Number(part.value)
        break
      case "era":
        bc = part.value.startsWith("B")
        break
      default:
        break
    }
  }
  if (bc) year = 1 - year
  const local = daysFromCivil(year, month, day) * DAY + hour * 3_600_000 + minute * MINUTE + second * SECOND
  return local - t
}

/**
 * What is known of a zone around one day number `n`: for instants in
 * `[(n − 1) days, (n + 2) days)` the offset is `before` until the instant `at` and `after`
 * from it (`at` is +∞ when the offset does not change there).
 */
interface DayInfo {
  readonly before: number
  readonly after: number
  readonly at: number
}

interface ZoneCache {
  /** Offset at UTC midnight of a day number. */
  readonly samples: Map<number, number>
  readonly days: Map<number, DayInfo>
}

const zones = new Map<string, ZoneCache>()
/** Caps on the caches of a long-running process (a few years of days per zone). */
const MAX_DAYS_PER_ZONE = 8_192

const zoneCache = (timeZone: string): ZoneCache => {
  let z = zones.get(timeZone)
  if (z === undefined) {
    z = { samples: new Map(), days: new Map() }
    zones.set(timeZone, z)
  }
  return z
}

const sample = (timeZone: string, z: ZoneCache, n: number): number => {
  let o = z.samples.get(n)
  if (o === undefined) {
    if (z.samples.size >= MAX_DAYS_PER_ZONE) z.samples.clear()
    o = intlOffset(timeZone, n * DAY)
    z.samples.set(n, o)
  }
  return o
}

const dayInfoOf = (timeZone: string, n: number): DayInfo => {
  const z = zoneCache(timeZone)
  const known = z.days.get(n)
  if (known !== undefined) return known
  const before = sample(timeZone, z, n - 1)
  const end = sample(timeZone, z, n + 2)
  let info: DayInfo
  if (before === end) {
    info = { before, after: before, at: Number.POSITIVE_INFINITY }
  } else {
    // Bisect, in whole seconds, for the first instant whose offset is not `before`.
    let lo = ((n - 1) * DAY) / SECOND
    let hi = ((n + 2) * DAY) / SECOND
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2)
      if (intlOffset(timeZone, mid * SECOND) === before) lo = mid
      else hi = mid
    }
    info = { before, after: intlOffset(timeZone, hi * SECOND), at: hi * SECOND }
  }
  if (z.days.size >= MAX_DAYS_PER_ZONE) z.days.clear()
  z.days.set(n, info)
  return info
}

/** The zone's UTC offset in milliseconds (local − UTC) at an instant. */
export const offsetAt = (timeZone: string, ms: number): number => {
  const info = dayInfoOf(timeZone, Math.floor(ms / DAY))
  return ms < info.at ? info.before : info.after
}

/** Day number of the local date of an instant in a zone. */
export const localDayOf = (timeZone: string, ms: number): number => Math.floor((ms + offsetAt(timeZone, ms)) / DAY)

/** `YYYY-MM-DD` of an instant in a zone. */
export const localDateOf = (timeZone: string, ms: number): string => formatDay(localDayOf(timeZone, ms))

/** Wall-clock minute `minutes` (0..1440) of day number `day` in a zone → epoch ms. */
export const localToUtcDay = (timeZone: string, day: number, minutes: number): number => {
  const local = day * DAY + minutes * MINUTE
  const info = dayInfoOf(timeZone, day)
  if (local < info.at + info.before) return local - info.before
  // In a gap (only possible when the offset grows): the first instant after it.
  if (local < info.at + info.after) return info.at
  return local - info.after
}

export const localToUtc = (timeZone: string, date: string, minutes: number): number => localToUtcDay(timeZone, parseDay(date), minutes)

/**
 * The spring-forward gap touching a local date, as wall-clock minutes relative to that
 * date's 00:00 (`from` inclusive, `to` exclusive; may reach outside 0..1440), or
 * `undefined` when the clocks do not jump forward around that date.
 */
export const gapOnDay = (timeZone: string, day: number): { readonly from: number; readonly to: number } | undefined => {
  const info = dayInfoOf(timeZone, day)
  if (!(info.after > info.before)) return undefined
  const base = day * DAY
  const from = (info.at + info.before - base) / MINUTE
  const to = (info.at + info.after - base) / MINUTE
  // Only a gap whose wall-clock range touches this date.
  return to > 0 && from < 1440 ? { from, to } : undefined
}

/** True if a spring-forward gap lies (in part) within `[fromMinutes, toMinutes)` on that local date. */
export const hasGapOn = (timeZone: string, date: string, fromMinutes: number, toMinutes: number): boolean => {
  const gap = gapOnDay(timeZone, parseDay(date))
  return gap !== undefined && gap.from < toMinutes && gap.to > fromMinutes
}

/** `HH:MM` of a wall-clock minute of day (1440 → `24:00`). */
export const formatMinutes = (minutes: number): string => {
  const m = Math.round(minutes)
  return `${pad2(Math.floor(m / 60))}:${pad2(m % 60)}`
}

/** `YYYY-MM-DD HH:MM` of an instant in a zone, for human-readable details. */
export const formatLocal = (timeZone: string, ms: number): string => {
  const local = ms + offsetAt(timeZone, ms)
  const day = Math.floor(local / DAY)
  return `${formatDay(day)} ${formatMinutes(Math.floor((local - day * DAY) / MINUTE))}`
}

/** `HH:MM` of an instant in a zone. */
export const formatLocalTime = (timeZone: string, ms: number): string => {
  const local = ms + offsetAt(timeZone, ms)
  const day = Math.floor(local / DAY)
  return formatMinutes(Math.floor((local - day * DAY) / MINUTE))
}
