/** Custom domains: the `Domains` use case, a domain's schemas and its verification. */
export * from "./domain.js"
export {
  DEFAULT_DOMAIN_CACHE_TTL_MS,
  DOMAIN_OWNERS_TENANT,
  DomainListParams,
  type DomainOwner,
  DomainOwnersCollection,
  Domains,
  DomainsCollection,
  DomainSettings,
  type DomainSettingsService
} from "./Domains.js"
