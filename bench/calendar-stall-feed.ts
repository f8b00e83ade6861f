/**
 * The 2 MB feed the stall benchmark syncs, served from a process of its own so that serving
 * it takes no time from the benchmark's other processes. Prints `feed <url> <bytes>`.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { bigFeed } from "./calendarFeeds.js"

const feed = bigFeed()
const server = http.createServer((_req, res) => void res.writeHead(200, { "content-type": "text/calendar" }).end(feed.text))
server.listen(0, "127.0.0.1", () => {
  console.log(`feed http://127.0.0.1:${(server.address() as AddressInfo).port}/big.ics ${feed.text.length}`)
})
// Ends with the benchmark: its stdin closes when the benchmark exits.
process.stdin.resume().on("end", () => process.exit(0))
