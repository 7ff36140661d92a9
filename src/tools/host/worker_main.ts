/** Worker entry used when Deft runs from source without main.ts (tests); main.ts is the usual one. */
import { serveToolHost } from "./worker.ts";

serveToolHost();
