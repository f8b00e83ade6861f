// The port lives in src/ports/; this path keeps earlier imports working.
export * from "../ports/feedReader.js"
