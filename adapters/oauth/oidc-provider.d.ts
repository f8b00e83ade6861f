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
    session?: { readonly accountId?: string; readonly cookie?: string } | undefined
    readonly grantId?: string | undefined
    /** Expiry, epoch seconds. */
    readonly exp: number
    save(ttlSeconds: number): Promise<string>
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
    createContext(req: IncomingMessage, res: ServerResponse): { readonly cookies: { secure?: boolean } }
    readonly Grant: {
      new(init: { jti?: string; accountId: string; clientId: string }): GrantInstance
      find(id: string): Promise<GrantInstance | undefined>
    }
    readonly Session: { find(id: string): Promise<{ destroy(): Promise<void> } | undefined> }
    readonly Client: { prototype: { compareClientSecret(this: { clientSecret?: string }, actual: string): Promise<boolean> | boolean } }
    callback(): (req: IncomingMessage, res: ServerResponse) => void
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: object,
      options?: { mergeWithLastSubmission?: boolean }
    ): Promise<void>
    on(event: string, listener: (...args: Array<any>) => void): this
  }

  export class Check {
    constructor(reason: string, description: string, check: (ctx: any) => boolean | Promise<boolean>)
  }

  export interface Prompt {
    readonly name: string
    readonly checks: { add(check: Check, index?: number): void }
  }

  export const interactionPolicy: {
    readonly base: () => Array<Prompt> & { get(name: string): Prompt | undefined }
    readonly Check: typeof Check
  }

  export const errors: { readonly [name: string]: new(...args: Array<any>) => Error }
}
