/** Entry point of the `slotwise` binary (bin/slotwise.js runs its compiled, bundled form). */
import { main } from "./adapters/http/cli.js"
import { USERS_CREATE_HELP, usersCreate } from "./adapters/oauth/cli.js"
import { httpServicesLayer, serverLayer, storageFromLocation, storageLayer } from "./compose.js"

void main(process.argv.slice(2), process.env, {
  server: serverLayer,
  accounts: (storage) => httpServicesLayer({ storage }),
  usersCreate: {
    help: USERS_CREATE_HELP,
    run: (args) =>
      usersCreate(args, {
        storage: (database) => storageLayer(storageFromLocation(database)),
        stdin: process.stdin,
        out: (text) => process.stdout.write(text),
        err: (text) => process.stderr.write(text)
      })
  }
})
