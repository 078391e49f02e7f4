//! The system calls the emulator needs beyond `std`: receiving with kernel
//! timestamps (through the project's one `recvmsg`,
//! `quiche_vegas::sockets`), socket options, and Linux packet sockets for
//! the bridge mode.

use std::ffi::CString;
use std::io;
use std::mem::{size_of, size_of_val, zeroed};
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

pub use quiche_vegas::sockets::set_int_option;

// Linux values, the same on every architecture the project builds for.
const SO_RCVBUFFORCE: libc::c_int = 33;
const SO_SNDBUFFORCE: libc::c_int = 32;
const SOL_PACKET: libc::c_int = 263;
const PACKET_ADD_MEMBERSHIP: libc::c_int = 1;
const PACKET_MR_PROMISC: libc::c_ushort = 1;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const PACKET_VNET_HDR: libc::c_int = 15;
/// `struct virtio_net_hdr` before every frame of a socket with
/// PACKET_VNET_HDR: flags, gso_type, hdr_len, gso_size, csum_start,
/// csum_offset.
const VNET_HDR_LEN: usize = 10;
const VIRTIO_NET_HDR_GSO_UDP_L4: u8 = 5;
/// `sll_pkttype` of a frame this host sent.
pub const PACKET_OUTGOING: u8 = 4;
const ETH_P_ALL: u16 = 0x0003;

/// Socket buffers asked for: a satellite path's bursts must never overflow
/// the emulator's own socket queue.
pub const BUFFER_BYTES: libc::c_int = 16 << 20;

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// `setsockopt` with bytes.
pub fn set_bytes_option(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: &[u8],
) -> io::Result<()> {
    // SAFETY: the pointer and length describe `value`, alive for the call.
    check(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            value.as_ptr().cast(),
            value.len() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// Large buffers (forced past `net.core.*mem_max` where permitted) and
/// kernel receive timestamps.
pub fn prepare_receiving_socket(fd: RawFd) -> io::Result<()> {
    if set_int_option(fd, libc::SOL_SOCKET, SO_RCVBUFFORCE, BUFFER_BYTES).is_err() {
        set_int_option(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, BUFFER_BYTES).ok();
    }
    if set_int_option(fd, libc::SOL_SOCKET, SO_SNDBUFFORCE, BUFFER_BYTES).is_err() {
        set_int_option(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, BUFFER_BYTES).ok();
    }
    quiche_vegas::sockets::enable_receive_timestamps(fd)
}

/// A receive timeout, so that blocked receivers can notice a stop.
pub fn set_receive_timeout(fd: RawFd, timeout: Duration) -> io::Result<()> {
    let tv = libc::timeval {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_usec: timeout.subsec_micros() as libc::suseconds_t,
    };
    // SAFETY: the pointer and length describe `tv`, alive for the call.
    check(unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            size_of::<libc::timeval>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// One received datagram or frame.
pub struct Received {
    pub len: usize,
    /// The sender's address as the kernel gave it.
    pub from: libc::sockaddr_storage,
    /// Kernel receive time (CLOCK_REALTIME nanoseconds), if reported.
    pub kernel_time: Option<i64>,
}

/// `recvmsg` into `buf` with the kernel's receive timestamp. `Ok(None)`
/// when nothing is waiting (non-blocking socket or receive timeout).
pub fn receive(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<Received>> {
    match quiche_vegas::sockets::receive(fd, buf, 0) {
        Ok(r) => Ok(Some(Received {
            len: r.len,
            from: r.from,
            kernel_time: r
                .kernel_time
                .map(|t| quiche_vegas::sockets::timespec_nanos(&t)),
        })),
        Err(e) => match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted => {
                Ok(None)
            }
            // An ICMP error for an earlier send: nothing to read.
            io::ErrorKind::ConnectionRefused => Ok(None),
            _ => Err(e),
        },
    }
}

/// The socket address in a `sockaddr_storage` of family AF_INET or
/// AF_INET6.
pub fn socket_addr(storage: &libc::sockaddr_storage) -> Option<SocketAddr> {
    quiche_vegas::sockets::socket_addr(storage, size_of_val(storage) as libc::socklen_t)
}

/// A frame from a packet socket: it is `buf[start..received.len]`; a UDP
/// GSO super-frame says its segment size.
pub struct PacketFrame {
    pub received: Received,
    pub start: usize,
    pub udp_gso_size: Option<usize>,
}

/// A packet socket bound to one interface: every frame it receives and
/// sends, Ethernet header included.
pub struct PacketSocket {
    fd: OwnedFd,
    /// Frames come and go with a virtio-net header, which tells the
    /// segment size of a UDP GSO super-frame.
    vnet: bool,
    pub ifindex: i32,
    pub name: String,
    pub mtu: usize,
}

impl PacketSocket {
    /// Opens a promiscuous packet socket on interface `name` that does not
    /// see the frames this host sends on it.
    pub fn open(name: &str) -> io::Result<PacketSocket> {
        let cname = CString::new(name)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "bad interface name"))?;
        // SAFETY: a NUL-terminated name.
        let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
        if ifindex == 0 {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no interface '{name}' in this network namespace"),
            ));
        }
        let protocol = ETH_P_ALL.to_be();
        // SAFETY: plain socket creation.
        let fd = check(unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                libc::c_int::from(protocol),
            )
        })
        .map_err(|e| {
            if e.kind() == io::ErrorKind::PermissionDenied {
                io::Error::new(
                    e.kind(),
                    "packet sockets need CAP_NET_RAW (run as root, or use the udp mode)",
                )
            } else {
                e
            }
        })?;
        // SAFETY: a new descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let raw = fd.as_raw_fd();
        set_int_option(raw, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1).ok();
        // A sender using UDP segmentation offload hands the interface one
        // super-frame for many datagrams; with this header the emulator can
        // cut it into the datagrams again (`frame::split_udp_gso`).
        let vnet = set_int_option(raw, SOL_PACKET, PACKET_VNET_HDR, 1).is_ok();
        // SAFETY: all-zero is a valid sockaddr_ll, then filled in.
        let mut addr: libc::sockaddr_ll = unsafe { zeroed() };
        addr.sll_family = libc::AF_PACKET as libc::c_ushort;
        addr.sll_protocol = protocol;
        addr.sll_ifindex = ifindex as libc::c_int;
        // SAFETY: the pointer and length describe `addr`.
        check(unsafe {
            libc::bind(
                raw,
                (&addr as *const libc::sockaddr_ll).cast(),
                size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })?;
        // packet_mreq: ifindex, type, address length, address.
        let mut mreq = Vec::with_capacity(16);
        mreq.extend_from_slice(&(ifindex as i32).to_ne_bytes());
        mreq.extend_from_slice(&PACKET_MR_PROMISC.to_ne_bytes());
        mreq.extend_from_slice(&0u16.to_ne_bytes());
        mreq.extend_from_slice(&[0u8; 8]);
        set_bytes_option(raw, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq)?;
        prepare_receiving_socket(raw)?;
        set_receive_timeout(raw, Duration::from_millis(100))?;
        let mtu = std::fs::read_to_string(format!("/sys/class/net/{name}/mtu"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(1500);
        Ok(PacketSocket {
            fd,
            vnet,
            ifindex: ifindex as i32,
            name: name.to_string(),
            mtu,
        })
    }

    /// The next frame received on the interface (not one sent from here),
    /// with its kernel timestamp; `Ok(None)` after the receive timeout.
    pub fn receive(&self, buf: &mut [u8]) -> io::Result<Option<PacketFrame>> {
        loop {
            let Some(r) = receive(self.fd.as_raw_fd(), buf)? else {
                return Ok(None);
            };
            // SAFETY: a packet socket's source address is a sockaddr_ll.
            let ll: libc::sockaddr_ll = unsafe {
                std::ptr::read_unaligned((&r.from as *const libc::sockaddr_storage).cast())
            };
            if ll.sll_pkttype == PACKET_OUTGOING || ll.sll_ifindex != self.ifindex {
                continue;
            }
            if !self.vnet {
                return Ok(Some(PacketFrame {
                    start: 0,
                    udp_gso_size: None,
                    received: r,
                }));
            }
            if r.len < VNET_HDR_LEN {
                continue;
            }
            let gso_type = buf[1] & 0x7f;
            let gso_size = usize::from(u16::from_le_bytes([buf[4], buf[5]]));
            return Ok(Some(PacketFrame {
                start: VNET_HDR_LEN,
                udp_gso_size: (gso_type == VIRTIO_NET_HDR_GSO_UDP_L4 && gso_size > 0)
                    .then_some(gso_size),
                received: r,
            }));
        }
    }

    /// Sends a whole frame out of the interface.
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        // SAFETY: all-zero is a valid sockaddr_ll, then filled in.
        let mut addr: libc::sockaddr_ll = unsafe { zeroed() };
        addr.sll_family = libc::AF_PACKET as libc::c_ushort;
        addr.sll_ifindex = self.ifindex;
        addr.sll_halen = 6;
        let n = frame.len().min(6);
        addr.sll_addr[..n].copy_from_slice(&frame[..n]);
        // A zero virtio-net header first, if the socket takes one: no
        // offload asked for.
        let header = [0u8; VNET_HDR_LEN];
        let mut iov = [
            libc::iovec {
                iov_base: header.as_ptr() as *mut libc::c_void,
                iov_len: if self.vnet { VNET_HDR_LEN } else { 0 },
            },
            libc::iovec {
                iov_base: frame.as_ptr() as *mut libc::c_void,
                iov_len: frame.len(),
            },
        ];
        // SAFETY: all-zero is a valid msghdr, then pointed at live buffers.
        let mut msg: libc::msghdr = unsafe { zeroed() };
        msg.msg_name = (&mut addr as *mut libc::sockaddr_ll).cast();
        msg.msg_namelen = size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        msg.msg_iov = iov.as_mut_ptr();
        msg.msg_iovlen = iov.len() as _;
        // SAFETY: every pointer in `msg` refers to a live buffer; the kernel
        // only reads them.
        let rc = unsafe { libc::sendmsg(self.fd.as_raw_fd(), &msg, 0) };
        if rc < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }
}
