/** Entry point of the `slotwise` binary (bin/slotwise.js runs its compiled, bundled form). */
import { describeStorage, main, storageFlag } from "./adapters/cli/main.js"
import { USERS_CREATE_HELP, usersCreate } from "./adapters/oauth/cli.js"
import { httpServicesLayer, serverLayer, storageLayer } from "./compose.js"

void main(process.argv.slice(2), process.env, {
  server: serverLayer,
  accounts: (storage) => httpServicesLayer({ storage }),
  usersCreate: {
    help: USERS_CREATE_HELP,
    run: (args) =>
      usersCreate(args, {
        // The same storage rule as every other command: --database, $SLOTWISE_DATABASE_URL, ./slotwise.db.
        storage: (database) => {
          const storage = storageFlag(database, process.env)
          return { layer: storageLayer(storage), name: describeStorage(storage) }
        },
        stdin: process.stdin,
        out: (text) => process.stdout.write(text),
        err: (text) => process.stderr.write(text)
      })
  }
})
