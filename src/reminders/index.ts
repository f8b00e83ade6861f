/** Reminders: a reminder's schemas, the defaults and the firing of due reminders. */
export * from "./reminder.js"
export {
  makeReminderFiring,
  ReminderDefaults,
  ReminderJobsCollection,
  type ReminderSettings,
  ReminderSettingsCollection
} from "./Reminders.js"
