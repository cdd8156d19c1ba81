export type RevocationStatus = 'good' | 'revoked' | 'unknown';

/** What one source concluded; 'unusable' sends the check to the next source. */
export type SourceAnswer =
  | {
      kind: 'answer';
      status: RevocationStatus;
      revokedAt?: Date;
      revocationReason?: string;
      thisUpdate: Date;
      nextUpdate?: Date;
      /** Why the answer is 'unknown', when it is. */
      note?: string;
    }
  | { kind: 'unusable'; reason: string };
