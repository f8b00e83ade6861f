/**
 * How long a hold lasts. The widget bundles this module (it asks for the longest hold a
 * publishable key is granted), so it imports nothing.
 */
export const HOLD_DEFAULT_TTL_SECONDS = 300
export const HOLD_MAX_TTL_SECONDS = 600

/**
 * Holds asked for by a visitor through a publishable key, which anyone can copy from a web
 * page. Three minutes covers typing a name, an email and a phone number; the widget renews a
 * hold for visitors who take longer, and books the time directly if a hold lapsed.
 */
export const VISITOR_HOLD_MAX_TTL_SECONDS = 180
