/**
 * The hosted pages' publishable key per account and environment (domain/hostedPage.ts): its
 * secret is HMAC(deployment secret, "hosted-page-key:" + account + environment), created as
 * a key on first use with only its hash stored, like every key. Instances racing to create it
 * insert the same credential (its hash is the primary key): one wins, the others read it back.
 */
import { Effect, Option } from "effect"
import { ApiKeys } from "../keys/ApiKeys.js"
import { CredentialsCollection, SYSTEM_TENANT } from "../auth/collections.js"
import { sha256Hex } from "../auth/crypto.js"
import { PUBLISHABLE_SCOPES, secretPrefix } from "../keys/apiKey.js"
import type { StorageFailure } from "../domain/errors.js"
import { HOSTED_PAGE_KEY_NAME, HOSTED_PAGE_MARK, hostedKeyMessage } from "./hostedPage.js"
import { makeManageLinks } from "../manage/ManageLinks.js"
import { fromBase64url, ManageLinkMac } from "../ports/manageLinks.js"
import { Storage } from "../ports/storage.js"
import { Tenant, type TenantId } from "../ports/tenant.js"

/** 32 bytes of MAC as 64 hex digits: within the key format's alphabet and length. */
const KEY_MAC_BYTES = 32

const hex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")

export class HostedPageKeys extends Effect.Service<HostedPageKeys>()("slotwise/HostedPageKeys", {
  effect: Effect.gen(function*() {
    const storage = yield* Storage
    const apiKeys = yield* ApiKeys
    const mac = yield* ManageLinkMac
    const links = yield* makeManageLinks()
    const credentials = storage.collection(CredentialsCollection)

    const secretOf = (tenant: TenantId) =>
      Effect.gen(function*() {
        const key = yield* links.deploymentKey
        const digest = fromBase64url(yield* mac.sign(key, hostedKeyMessage(tenant), KEY_MAC_BYTES))
        return secretPrefix("publishable", tenant.environment) + hex(digest)
      })

    const exists = (hash: string) => Effect.map(Effect.provideService(credentials.get(hash), Tenant, SYSTEM_TENANT), Option.isSome)

    /**
     * The secret of `tenant`'s hosted-page key, creating the key when it does not exist (or
     * was revoked: the next page view issues it again under the same secret).
     */
    const keyFor = (tenant: TenantId): Effect.Effect<string, StorageFailure> =>
      Effect.gen(function*() {
        const secret = yield* secretOf(tenant)
        const hash = yield* sha256Hex(secret)
        if (yield* exists(hash)) return secret
        const created = yield* Effect.either(apiKeys.issue(tenant, {
          name: HOSTED_PAGE_KEY_NAME,
          type: "publishable",
          scopes: PUBLISHABLE_SCOPES,
          expires_at: null,
          metadata: { [HOSTED_PAGE_MARK]: "true" },
          source_key_id: null
        }, secret))
        if (created._tag === "Left" && !(yield* exists(hash))) return yield* Effect.fail(created.left)
        return secret
      })

    return { keyFor } as const
  })
}) {}
