/**
 * Requests that node:http refuses before the app runs (header block or URL over 16 KiB,
 * malformed framing, a request that never finished) still get a problem document, written
 * raw on the socket since there is no request object to answer through.
 */
import type { Socket } from "node:net"
import { BadRequest, PROBLEM_TYPE_BASE, type Problem, toProblem } from "../../src/domain/errors.js"
import { PROBLEM_CONTENT_TYPE } from "./contract/problems.js"

/** Node's limit on the request line and headers together (also its default). */
export const MAX_HEADER_BYTES = 16 * 1024

const REASONS: Record<number, string> = { 400: "Bad Request", 408: "Request Timeout", 431: "Request Header Fields Too Large" }

const transportProblem = (status: number, code: string, title: string, detail: string): Problem => ({
  type: `${PROBLEM_TYPE_BASE}${code}`,
  title,
  status,
  code,
  detail
})

const problemOf = (code: string | undefined): Problem => {
  if (code === "HPE_HEADER_OVERFLOW") {
    const detail = `the request line and headers exceed ${MAX_HEADER_BYTES} bytes (16 KiB)`
    return transportProblem(431, "headers_too_large", "Request header fields too large", detail)
  }
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return transportProblem(408, "request_timeout", "Request timeout", "the request was not received in time")
  }
  const detail = "the request is not well-formed HTTP/1.1"
  return toProblem(new BadRequest({ detail, errors: [{ path: "", message: detail }] }))
}

/** The raw HTTP/1.1 response for a parser error code; the connection closes after it. */
export const rawProblemResponse = (code: string | undefined): string => {
  const problem = problemOf(code)
  const body = JSON.stringify(problem)
  return `HTTP/1.1 ${problem.status} ${REASONS[problem.status]}\r\n` +
    `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    "Connection: close\r\n\r\n" + body
}

/** node:http's `clientError` listener. */
export const answerClientError = (error: Error & { readonly code?: string }, socket: Socket): void => {
  // A reset has no one to read a response; one already under way must not be interleaved.
  const inProgress = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true
  if (error.code === "ECONNRESET" || !socket.writable || inProgress) {
    socket.destroy()
    return
  }
  socket.end(rawProblemResponse(error.code))
}
