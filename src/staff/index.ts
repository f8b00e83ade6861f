/** The staff feature: the `Staff` use case and a member's schemas (`StaffMember` is the member's schema). */
export { Staff as StaffMember, StaffCreate, StaffFields, StaffUpdate } from "./member.js"
export { Staff, StaffListParams } from "./Staff.js"
