/**
 * The signing page's script (`/ky-so/…`): its modules live in server/web/signing-page/, beside
 * the USB-token module they hand the session to.
 */
import '../signing-page/page';
