/**
 * Why `slotwise serve` could not start, in words that say what to do: a port in use (tried
 * before anything else opens, so it is said at once), a host not of this machine, a
 * PostgreSQL out of reach; never a stack trace.
 */
import * as net from "node:net"
import { isSlotwiseFailure } from "../../src/domain/errors.js"
import { describeStorage, type StorageFlag } from "./storage.js"

/** Where the server was asked to listen, and on what storage. */
interface Where {
  readonly port: number
  readonly host: string
  readonly storage: StorageFlag
}

const CHOOSE_PORT = "choose another with --port <n> or $SLOTWISE_PORT (0 picks any free port)"

/** Why the server cannot listen where the flags say, in words that say what to do; undefined for another failure. */
const listenProblem = (error: unknown, flags: Where): string | undefined => {
  const code = (error as { code?: unknown })?.code ?? (error as { cause?: { code?: unknown } })?.cause?.code
  if (code === "EADDRINUSE") {
    return `port ${flags.port} on ${flags.host} is already in use (another slotwise, or another program): stop that, or ${CHOOSE_PORT}`
  }
  if (code === "EACCES") return `not allowed to listen on port ${flags.port} (ports below 1024 need privileges): ${CHOOSE_PORT}`
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") {
    return `cannot listen on ${flags.host}: it is not an address of this machine; choose one with --host or $SLOTWISE_HOST (127.0.0.1, 0.0.0.0)`
  }
  return undefined
}

/** Listens on the port and lets go at once, so a taken port is reported before anything starts. */
export const tryPort = (flags: Where): Promise<unknown> =>
  new Promise((resolve) => {
    if (flags.port === 0) return resolve(undefined)
    const probe = net.createServer()
    probe.once("error", resolve)
    probe.listen({ port: flags.port, host: flags.host, exclusive: true }, () => probe.close(() => resolve(undefined)))
  })

/** A failure to start, in words: what is wrong and what to do. */
export const startFailure = (error: unknown, flags: Where): string => {
  const listen = listenProblem(error, flags)
  if (listen !== undefined) return listen
  if (
    isSlotwiseFailure(error) && error._tag === "StorageFailure" && error.unavailable === true && flags.storage !== "memory" &&
    "postgres" in flags.storage
  ) {
    return `${error.detail}. Check that PostgreSQL runs there and that the URL (--database or $SLOTWISE_DATABASE_URL) is right; ` +
      "--database-wait-seconds or $SLOTWISE_DATABASE_WAIT_SECONDS sets how long start-up keeps trying"
  }
  return `cannot serve (${describeStorage(flags.storage)}): ${
    isSlotwiseFailure(error) ? error.detail : String((error as any)?.cause ?? error)
  }`
}
