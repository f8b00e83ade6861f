/** The deployment's secrets (manage links are signed with one). */
import type { DeploymentSecret } from "./manageLink.js"
import type { CollectionSpec } from "../ports/storage.js"

/** Secrets of the deployment, shared by every instance; only in the system tenant. */
export const DeploymentSecretsCollection: CollectionSpec<DeploymentSecret> = {
  name: "deployment_secrets",
  indexes: {},
  order: []
}
