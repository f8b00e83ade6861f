/** The services feature: the `Services` use case, a service's schemas and its questions. */
export * from "./question.js"
export * from "./service.js"
export { ServiceListParams, Services } from "./Services.js"
