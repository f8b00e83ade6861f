import { MemoryStorageLive } from "../../adapters/memory/storage.js"
import { storageContract } from "./contract.js"

storageContract("memory", () => MemoryStorageLive)
