// Preloaded into a server by bench/create-statements.ts (`node -r`): times every better-sqlite3
// statement the process runs, by its SQL text. The first SIGUSR2 starts counting afresh; the
// second writes what was counted, as JSON, to STATEMENT_TIMES_OUT. CommonJS, so `-r` loads it
// before the server imports better-sqlite3 (the same module instance: Node shares it).
const fs = require("node:fs")
const Database = require(require.resolve("better-sqlite3", { paths: [process.cwd()] }))

const times = new Map()
let counting = false
const probe = new Database(":memory:")
const Statement = Object.getPrototypeOf(probe.prepare("SELECT 1"))
probe.close()
for (const method of ["run", "all", "get"]) {
  const original = Statement[method]
  Statement[method] = function(...args) {
    if (!counting) return original.apply(this, args)
    const started = process.hrtime.bigint()
    try {
      return original.apply(this, args)
    } finally {
      const micros = Number(process.hrtime.bigint() - started) / 1000
      const entry = times.get(this.source)
      if (entry === undefined) times.set(this.source, { calls: 1, micros })
      else {
        entry.calls++
        entry.micros += micros
      }
    }
  }
}
process.on("SIGUSR2", () => {
  if (!counting) {
    times.clear()
    counting = true
    return
  }
  counting = false
  const rows = [...times].map(([sql, { calls, micros }]) => ({ sql, calls, micros }))
  fs.writeFileSync(process.env.STATEMENT_TIMES_OUT, JSON.stringify(rows))
})
