/**
 * A database of its own for one test run on the PostgreSQL at `SLOTWISE_TEST_POSTGRES_URL`
 * (default: the local server as `postgres`), dropped when the run ends, so runs never
 * collide. An unreachable server fails the run: nothing here skips.
 */
import { randomBytes } from "node:crypto"
import pg from "pg"

export const TEST_POSTGRES_URL = process.env.SLOTWISE_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

export interface TestDatabase {
  readonly name: string
  /** The connection string of the new database. */
  readonly url: string
  /** Drops the database, ending any connection left on it. */
  readonly drop: () => Promise<void>
}

const onServer = async <A>(f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 5000 })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

export const createTestDatabase = async (): Promise<TestDatabase> => {
  const name = `slotwise_test_${randomBytes(6).toString("hex")}`
  await onServer((client) => client.query(`CREATE DATABASE ${name}`))
  const url = new URL(TEST_POSTGRES_URL)
  url.pathname = `/${name}`
  return {
    name,
    url: url.toString(),
    drop: () => onServer((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined)
  }
}
