import { placementOf } from '../../src/contracts/queries';
import { JsonObject, parseJsonColumn, StoredJsonError, StringList } from '../../src/db/jsonColumn';
import { certificateInfoOf } from '../../src/sessions/queries';

describe('JSON columns read back through their schema', () => {
  it('returns what the column holds when it matches', () => {
    expect(parseJsonColumn(StringList, 'templates.fields', '["a","b"]')).toEqual(['a', 'b']);
    expect(parseJsonColumn(JsonObject, 'dossiers.metadata', '{"ref":1}')).toEqual({ ref: 1 });
    expect(placementOf({ placement: '{"x":10,"y":20,"width":170,"height":60}' })).toEqual({
      x: 10,
      y: 20,
      width: 170,
      height: 60,
    });
    expect(placementOf({ placement: null })).toBeNull();
  });

  it('names the column and the mismatch, never the stored values', () => {
    const read = () =>
      certificateInfoOf({ certificate_info: '{"subject":"CN=secret-holder","issuer":7}' });
    expect(read).toThrow(StoredJsonError);
    expect(read).toThrow(/signing_sessions\.certificate_info does not hold what its schema says/);
    expect(read).toThrow(/issuer/);
    expect(read).not.toThrow(/secret-holder/);
    expect(() => parseJsonColumn(StringList, 'templates.fields', '{"a":1}')).toThrow(
      /templates\.fields/,
    );
    expect(() => parseJsonColumn(JsonObject, 'dossiers.metadata', '{broken')).toThrow(
      'dossiers.metadata holds text that is not JSON',
    );
  });
});
