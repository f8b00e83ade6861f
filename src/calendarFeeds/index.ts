/** Calendar feeds: the `CalendarFeeds` use case, a feed's schemas and limits. */
export {
  CALENDAR_FEED_TOKENS_TENANT,
  type CalendarFeedToken,
  CalendarFeedTokensCollection,
  CalendarFeeds,
  CalendarFeedsCollection,
  MAX_FEED_EVENTS,
  type RenderedFeed
} from "./CalendarFeeds.js"
export * from "./calendarFeed.js"
