/** Texts of the dossiers pages. */
export const dossiers = {};
