/**
 * What the search benchmarks share: the repository's path, their command-line
 * options, a shell, the tools they compare against, and the Linux tree.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root. */
export const repo: string = fileURLToPath(new URL("..", import.meta.url));

/** The value after `--name` on the command line, if given. */
export function option(name: string): string | undefined {
  const at = Deno.args.indexOf(name);
  return at === -1 ? undefined : Deno.args[at + 1];
}

/** Runs a bash script; its exit code and its output (stdout, then stderr). */
export async function sh(
  script: string,
  cwd: string = repo,
  env: Record<string, string> = {},
): Promise<{ code: number; out: string }> {
  const { code, stdout, stderr } = await new Deno.Command("bash", {
    args: ["-c", script],
    cwd,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code, out: new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr) };
}

/** Installs the Debian packages of the programs missing, and builds the npm package when absent. */
export async function ensureTools(programs: readonly [string, string][]): Promise<void> {
  const missing = [];
  for (const [bin, pkg] of programs) {
    if ((await sh(`command -v ${bin}`)).code !== 0) missing.push(pkg);
  }
  if (missing.length > 0) {
    console.error(`installing ${missing.join(" ")} …`);
    await sh(`apt-get update -qq && apt-get install -y -qq ${missing.join(" ")}`);
  }
  if ((await sh("test -f npm/mod.js")).code !== 0) {
    console.error("building the npm package …");
    await sh("deno task build:npm --no-checks");
  }
}

/** The Linux 6.1 tree: `--kernel DIR`, or linux-source-6.1 unpacked to the temporary directory. */
export async function kernelTree(): Promise<string> {
  const given = option("--kernel");
  if (given) return given;
  const target = join(Deno.env.get("TMPDIR") ?? "/tmp", "owt-bench-kernel");
  const tree = join(target, "linux-source-6.1");
  if ((await sh(`test -d ${tree}`)).code === 0) return tree;
  if ((await sh("test -f /usr/src/linux-source-6.1.tar.xz")).code !== 0) {
    console.error("installing linux-source-6.1 …");
    await sh("apt-get update -qq && apt-get install -y -qq linux-source-6.1");
  }
  console.error("unpacking the kernel tree …");
  await sh(`mkdir -p ${target} && tar xJf /usr/src/linux-source-6.1.tar.xz -C ${target}`);
  return tree;
}
