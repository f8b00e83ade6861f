/** A JSON call to a server the benchmarks start; throws on an error status. */
export const call = async (url: string, method: string, key: string, body?: unknown) => {
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {})
  })
  const json: any = await response.json()
  if (response.status >= 400) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(json)}`)
  return json
}
