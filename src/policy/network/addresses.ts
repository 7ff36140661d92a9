/**
 * Which IP addresses are special: the machine itself (loopback, unspecified), the local networks
 * (private ranges, link-local, shared address space), cloud metadata, multicast and reserved
 * space. The proxy connects to such an address only when the allow list names that address
 * itself: an allowed name that resolves there (DNS rebinding) or an IP literal is refused, so the
 * proxy never becomes a way into the user's own loopback services or the local network.
 */
import { isIP } from "node:net";
import { normalAddress } from "./rules.ts";

/** Why `address` is special (`a loopback address`), or undefined for an ordinary public one. */
export function specialAddress(address: string): string | undefined {
  const kind = isIP(address);
  if (kind === 4) return specialV4(address);
  if (kind !== 6) return "not an IP address";
  const groups = normalAddress(address).split(":").map((g) => parseInt(g, 16));
  const embedded = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeroHead = groups.slice(0, 5).every((g) => g === 0);
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible) reach the IPv4 address.
  if (zeroHead && (groups[5] === 0xffff || groups[5] === 0)) {
    if (groups[5] === 0 && groups[6] === 0 && groups[7] <= 1) {
      return groups[7] === 1 ? "a loopback address" : "the unspecified address";
    }
    return specialV4(embedded(groups[6], groups[7])) ?? "an IPv4-mapped address";
  }
  // NAT64 (64:ff9b::/96) reaches the IPv4 address too.
  if (groups[0] === 0x64 && groups[1] === 0xff9b) {
    return specialV4(embedded(groups[6], groups[7])) ?? undefined;
  }
  // 6to4 (2002::/16) carries an IPv4 address in its second and third groups.
  if (groups[0] === 0x2002) return specialV4(embedded(groups[1], groups[2]));
  if (groups[0] === 0xfd00 && groups[1] === 0x0ec2) return "a cloud metadata address";
  if ((groups[0] & 0xfe00) === 0xfc00) return "a private (unique local) address";
  if ((groups[0] & 0xffc0) === 0xfe80) return "a link-local address";
  if ((groups[0] & 0xffc0) === 0xfec0) return "a site-local address";
  if ((groups[0] & 0xff00) === 0xff00) return "a multicast address";
  if (groups[0] === 0x2001 && groups[1] === 0x0db8) return "a documentation address";
  if (groups[0] === 0x0100 && groups.slice(1, 4).every((g) => g === 0)) return "a discard address";
  return undefined;
}

function specialV4(address: string): string | undefined {
  const [a, b, c] = address.split(".").map(Number);
  if (a === 127) return "a loopback address";
  if (a === 0) return "the unspecified address";
  if (a === 169 && b === 254) {
    return c === 169 ? "a cloud metadata address" : "a link-local address";
  }
  if (a === 10 || (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168)) {
    return "a private address";
  }
  if (a === 100 && b >= 64 && b < 128) return "a shared (carrier-grade NAT) address";
  if (a === 192 && b === 0 && c === 0) return "a reserved address";
  if (a === 198 && (b === 18 || b === 19)) return "a benchmarking address";
  if (a >= 224 && a < 240) return "a multicast address";
  if (a >= 240) return "a reserved address";
  return undefined;
}
