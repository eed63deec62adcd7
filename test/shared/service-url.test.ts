import { describe, expect, it } from 'vitest';
import { normalizeServiceUrl } from '../../shared/service-url.js';

describe('normalizeServiceUrl', () => {
  it('adds the API prefix to a bare origin', () => {
    expect(normalizeServiceUrl('http://farm:8420')).toBe('http://farm:8420/api/external/v1');
    expect(normalizeServiceUrl('http://farm:8420/')).toBe('http://farm:8420/api/external/v1');
    expect(normalizeServiceUrl(' https://farm.example ')).toBe('https://farm.example/api/external/v1');
  });

  it('keeps a URL that already ends in the prefix, without a trailing slash', () => {
    expect(normalizeServiceUrl('http://127.0.0.1:8420/api/external/v1')).toBe('http://127.0.0.1:8420/api/external/v1');
    expect(normalizeServiceUrl('http://127.0.0.1:8420/api/external/v1/')).toBe('http://127.0.0.1:8420/api/external/v1');
  });

  it('appends the prefix under a reverse-proxy path', () => {
    expect(normalizeServiceUrl('https://proxy.example/renderbridge')).toBe(
      'https://proxy.example/renderbridge/api/external/v1',
    );
  });

  it('refuses what is not an http(s) URL', () => {
    expect(() => normalizeServiceUrl('farm:8420')).toThrow(/http\(s\)/);
    expect(() => normalizeServiceUrl('not a url')).toThrow(/not a URL/);
    expect(() => normalizeServiceUrl('ftp://farm')).toThrow(/http\(s\)/);
  });
});
