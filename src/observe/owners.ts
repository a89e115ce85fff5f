// Which process owns a socket: the inode in /proc/<pid>/fd/* links (socket:[inode]), as ss -p does.
// Without root, other users' processes are not readable and their sockets stay unowned.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { procRoot } from './proc.js';

export interface SocketOwner {
  pid: number;
  command: string;
}

/** The inode of a `socket:[12345]` fd link; undefined for anything else. Pure. */
export function socketInode(link: string): number | undefined {
  const m = /^socket:\[(\d+)\]$/.exec(link);
  return m ? Number(m[1]) : undefined;
}

/** inode → first owning process, over every process this user can read. */
export function socketOwners(root?: string): Map<number, SocketOwner> {
  const proc = procRoot(root);
  const out = new Map<number, SocketOwner>();
  let pids: string[];
  try {
    pids = readdirSync(proc).filter((d) => /^\d+$/.test(d));
  } catch {
    return out;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(join(proc, pid, 'fd'));
    } catch {
      continue; // gone, or not ours to read
    }
    let command: string | undefined;
    for (const fd of fds) {
      let inode: number | undefined;
      try {
        inode = socketInode(readlinkSync(join(proc, pid, 'fd', fd)));
      } catch {
        continue;
      }
      if (inode === undefined || out.has(inode)) continue;
      if (command === undefined) {
        try {
          command = readFileSync(join(proc, pid, 'comm'), 'utf8').trim();
        } catch {
          command = '?';
        }
      }
      out.set(inode, { pid: Number(pid), command });
    }
  }
  return out;
}
