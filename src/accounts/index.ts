/** The accounts feature: the `Accounts` use case, an account's schemas (settings, branding, handle) and its rules. */
export { Accounts, HANDLE_OWNERS_TENANT, type HandleOwner, HandleOwnersCollection } from "./Accounts.js"
export {
  Account,
  AccountSettingsUpdate,
  AccountUpdate,
  Branding,
  BrandingUpdate,
  Handle,
  HANDLE_HOLD_DAYS,
  handleProblem,
  NO_BRANDING,
  Plan,
  RESERVED_HANDLES,
  showsPoweredBy
} from "./account.js"
