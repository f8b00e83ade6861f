export * from "./policy.js"
export * from "./RateLimiter.js"
export * from "../ports/rateLimitStore.js"
