/** Manage links: the `Manage` use case (a client's cancel and reschedule) and its schemas. */
export { ClientRefusal, ManageCancel, ManagedBooking, ManageLink, ManageReschedule, ManageSlotQuery, MANAGE_LIMITS } from "./manageLink.js"
export { Manage, type OpenedLink } from "./Manage.js"
