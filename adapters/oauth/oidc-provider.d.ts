/** The parts of oidc-provider 9 this adapter uses (the package ships no type declarations). */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http"

  export interface AdapterPayload {
    [key: string]: unknown
    grantId?: string
    uid?: string
    consumed?: unknown
  }

  export interface InteractionDetails {
    readonly uid: string
    readonly prompt: { readonly name: string; readonly details: { readonly [key: string]: unknown } }
    readonly params: { readonly [key: string]: unknown }
    readonly session?: { readonly accountId?: string } | undefined
    readonly grantId?: string | undefined
  }

  export interface GrantInstance {
    readonly jti: string
    addOIDCScope(scope: string): void
    getOIDCScope(): string
    save(): Promise<string>
  }

  export default class Provider {
    constructor(issuer: string, configuration: object)
    proxy: boolean
    readonly Grant: {
      new(init: { jti?: string; accountId: string; clientId: string }): GrantInstance
      find(id: string): Promise<GrantInstance | undefined>
    }
    readonly Client: { prototype: { compareClientSecret(this: { clientSecret?: string }, actual: string): Promise<boolean> | boolean } }
    callback(): (req: IncomingMessage, res: ServerResponse) => void
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: object, options?: { mergeWithLastSubmission?: boolean }): Promise<void>
    on(event: string, listener: (...args: Array<any>) => void): this
  }

  export const errors: { readonly [name: string]: new(...args: Array<any>) => Error }
}
