// The timestamp algorithm tables live in `@esign/shared/cms`: the agent checks TSA tokens too.
export { type HashName, hashOf, hashOids, oid, signatureHash } from '@esign/shared/cms';
