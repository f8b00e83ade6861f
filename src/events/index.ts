/** Events: the `Events` use case (the event feed, listeners) and the event catalogue. */
export { type CommittedEvent, type EventListener, EventListParams, Events } from "./Events.js"
export * from "./catalogue.js"
