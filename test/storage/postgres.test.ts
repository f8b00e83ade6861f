import { afterAll } from "@effect/vitest"
import { PostgresStorageLive } from "../../adapters/postgres/layer.js"
import { createTestDatabase } from "../postgres/database.js"
import { storageContract } from "./contract.js"

const database = await createTestDatabase()
afterAll(() => database.drop())

let stores = 0
// A schema per test: a fresh, empty store in the run's database.
storageContract("postgres", () => PostgresStorageLive({ url: database.url, schema: `contract_${++stores}`, maxConnections: 4 }))
