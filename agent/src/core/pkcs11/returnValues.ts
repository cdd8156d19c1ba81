/** The PKCS#11 return values the agent tells apart (pkcs11js puts them in `error.code`). */
export const ckr = {
  GENERAL_ERROR: 0x05,
  DEVICE_ERROR: 0x30,
  DEVICE_REMOVED: 0x32,
  FUNCTION_NOT_SUPPORTED: 0x54,
  KEY_HANDLE_INVALID: 0x60,
  MECHANISM_INVALID: 0x70,
  OBJECT_HANDLE_INVALID: 0x82,
  PIN_INCORRECT: 0xa0,
  PIN_INVALID: 0xa1,
  PIN_LEN_RANGE: 0xa2,
  PIN_EXPIRED: 0xa3,
  PIN_LOCKED: 0xa4,
  SESSION_CLOSED: 0xb0,
  SESSION_HANDLE_INVALID: 0xb3,
  SLOT_ID_INVALID: 0x03,
  TOKEN_NOT_PRESENT: 0xe0,
  TOKEN_NOT_RECOGNIZED: 0xe1,
  USER_ALREADY_LOGGED_IN: 0x100,
  FUNCTION_CANCELED: 0x50,
  CRYPTOKI_ALREADY_INITIALIZED: 0x191,
} as const;

/** Token flags (CK_TOKEN_INFO.flags) the agent reads. */
export const tokenFlag = {
  LOGIN_REQUIRED: 0x4,
  PROTECTED_AUTHENTICATION_PATH: 0x100,
  USER_PIN_COUNT_LOW: 0x10000,
  USER_PIN_FINAL_TRY: 0x20000,
  USER_PIN_LOCKED: 0x40000,
} as const;

/** Return values that mean the token left (or took its sessions with it). */
export const tokenGone: ReadonlySet<number> = new Set([
  ckr.DEVICE_REMOVED,
  ckr.TOKEN_NOT_PRESENT,
  ckr.TOKEN_NOT_RECOGNIZED,
  ckr.SESSION_CLOSED,
  ckr.SESSION_HANDLE_INVALID,
  ckr.SLOT_ID_INVALID,
]);

export function pkcs11Code(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}
