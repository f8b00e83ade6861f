/** Entry point of the `slotwise` binary (bin/slotwise.js runs its compiled, bundled form). */
import { main } from "./adapters/http/cli.js"
import { httpServicesLayer, serverLayer } from "./compose.js"

void main(process.argv.slice(2), process.env, {
  server: serverLayer,
  accounts: (storage) => httpServicesLayer({ storage })
})
