/** Entry point of the `slotwise` binary (bin/slotwise.js runs the compiled form). */
import { main } from "./cli.js"

void main(process.argv.slice(2))
