/** The sandbox: sample events emitted on request. */
export { Sandbox, SandboxEmit } from "./Sandbox.js"
