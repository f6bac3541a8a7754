import { parsePhoneNumberFromString } from 'libphonenumber-js';

// Meta charges by the recipient's market: its country calling code (with a network prefix
// under +1) mapped to a country on the rate card, or to a region ("Rest of Africa", …), or to
// "Other". The mapping below is Meta's table ("Country calling codes", pricing docs, Oct 2025),
// by ISO 3166 region. When Meta moves a country out of its region onto the card (as it did with
// nine markets on 1 Oct 2026), a card that lists the country by name is enough: the card is
// asked for the country's own market first (rateCard.ts).

const COUNTRIES: Record<string, string> = {
  AR: 'Argentina', BR: 'Brazil', CL: 'Chile', CO: 'Colombia', EG: 'Egypt', FR: 'France', DE: 'Germany',
  IN: 'India', ID: 'Indonesia', IL: 'Israel', IT: 'Italy', MY: 'Malaysia', MX: 'Mexico', NL: 'Netherlands',
  NG: 'Nigeria', PK: 'Pakistan', PE: 'Peru', RU: 'Russia', SA: 'Saudi Arabia', ZA: 'South Africa', ES: 'Spain',
  TR: 'Turkey', AE: 'United Arab Emirates', GB: 'United Kingdom',
};

const REGIONS: Record<string, string> = {
  'North America': 'US CA',
  'Rest of Africa':
    'DZ AO BJ BW BF BI CM TD CG ER ET GA GM GH GW CI KE LS LR LY MG MW ML MR MA MZ NA NE RW SN SL SO SS SD SZ TZ TG TN UG ZM ZW',
  'Rest of Asia Pacific': 'AF AU BD KH CN HK JP LA MN NP NZ PG PH SG LK TW TJ TH TM UZ VN',
  'Rest of Central & Eastern Europe': 'AL AM AZ BY BG HR CZ GE GR HU LV LT MD MK PL RO RS SK SI UA',
  'Rest of Western Europe': 'AT BE DK FI IE NO PT SE CH',
  'Rest of Latin America': 'BO CR DO EC SV GT HT HN JM NI PA PY PR UY VE',
  'Rest of Middle East': 'BH IQ JO KW LB OM QA YE',
};

const REGION_OF = new Map(Object.entries(REGIONS).flatMap(([region, codes]) => codes.split(' ').map((code) => [code, region] as const)));

export const OTHER_MARKET = 'Other';

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });

/**
 * The ISO 3166 country of a recipient's E.164 number (a number of a range with no country of its
 * own, such as +1 555, counts as its calling code's main country), or undefined (a BSUID, an
 * unknown code).
 */
export function countryOfRecipient(recipient: string): string | undefined {
  if (!recipient.startsWith('+')) return undefined;
  const parsed = parsePhoneNumberFromString(recipient);
  return parsed?.country ?? parsed?.getPossibleCountries()[0];
}

/**
 * The market names a country may be priced under, most specific first: its own (as the card
 * names countries), its region's, then Other.
 */
export function marketCandidates(country: string | undefined): string[] {
  if (country === undefined) return [];
  let own: string | undefined = COUNTRIES[country];
  if (own === undefined) {
    try {
      own = regionNames.of(country);
    } catch {
      own = undefined;
    }
  }
  const region = REGION_OF.get(country);
  return [...new Set([own, region, OTHER_MARKET].filter((name): name is string => name !== undefined && name !== country))];
}
