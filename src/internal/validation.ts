// Input decoding is public (decodeInput, fieldErrorsOf); the core's modules import it from here too.
export * from "../domain/validation.js"
