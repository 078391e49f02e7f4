//! The one `recvmsg` of the project, with what its control messages say,
//! and the socket address it reports: shared by the apps' socket loops
//! ([`crate::net`]), the link emulator (`vegas-emu`'s `sockets`) and the
//! emulator's measuring harness, which each had their own unsafe copy.
//!
//! Control messages read: the kernel's receive stamp (`SO_TIMESTAMPNS`),
//! its software send stamp from the error queue (`SO_TIMESTAMPING`), and
//! the datagram's IPv4 options (`IP_RECVOPTS`, where RoVegas's AQT option
//! rides).

use std::io;
use std::mem::{size_of, size_of_val, zeroed};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::RawFd;

/// `SO_TIMESTAMPING` (and its control message `SCM_TIMESTAMPING`): the
/// same number on every architecture the project builds for.
pub const SO_TIMESTAMPING: libc::c_int = 37;

/// IPv4 options are at most 40 bytes (RFC 791).
const MAX_IP_OPTIONS: usize = 40;

/// One received datagram (or frame, or error-queue message) and what the
/// kernel said about it.
pub struct Received {
    /// Bytes written into the buffer.
    pub len: usize,
    /// The sender's address as the kernel wrote it (a packet socket's is a
    /// `sockaddr_ll`); [`Received::source`] reads an IP one.
    pub from: libc::sockaddr_storage,
    pub from_len: libc::socklen_t,
    /// `SCM_TIMESTAMPNS`: when the datagram arrived (CLOCK_REALTIME).
    pub kernel_time: Option<libc::timespec>,
    /// `SCM_TIMESTAMPING`'s software stamp (the first of its three).
    pub software_time: Option<libc::timespec>,
    ip_options: [u8; MAX_IP_OPTIONS],
    ip_options_len: Option<usize>,
}

impl Received {
    /// The datagram's IPv4 options, if the socket asked for them
    /// (`IP_RECVOPTS`) and the kernel gave any.
    pub fn ip_options(&self) -> Option<&[u8]> {
        self.ip_options_len.map(|n| &self.ip_options[..n])
    }

    /// The sender's IP address and port; `None` for other families.
    pub fn source(&self) -> Option<SocketAddr> {
        socket_addr(&self.from, self.from_len)
    }
}

/// Nanoseconds since the epoch of a kernel stamp.
pub fn timespec_nanos(ts: &libc::timespec) -> i64 {
    ts.tv_sec
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec)
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `setsockopt` with an int value.
pub fn set_int_option(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: the pointer and length describe `value`, alive for the call.
    check(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&value as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    })
}

/// Asks the kernel to stamp every datagram `fd` receives
/// ([`Received::kernel_time`]).
pub fn enable_receive_timestamps(fd: RawFd) -> io::Result<()> {
    set_int_option(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)
}

/// `recvmsg` of one datagram into `buf` with `flags` (`MSG_ERRQUEUE`,
/// `MSG_DONTWAIT`, ...). The error is the system call's, as it came
/// (`WouldBlock` for nothing waiting): what it means is the caller's.
pub fn receive(fd: RawFd, buf: &mut [u8], flags: libc::c_int) -> io::Result<Received> {
    // SAFETY: all-zero is a valid sockaddr_storage and msghdr.
    let mut from: libc::sockaddr_storage = unsafe { zeroed() };
    // Room for every control message asked for at once: IP options (40
    // bytes), a timespec (16), scm_timestamping (48) and an extended error
    // of the error queue, each with its header.
    let mut control = [0u64; 64];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: as above.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_name = (&mut from as *mut libc::sockaddr_storage).cast();
    msg.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = size_of_val(&control) as _;
    // SAFETY: every pointer in `msg` refers to a live buffer of the length
    // given.
    let n = unsafe { libc::recvmsg(fd, &mut msg, flags) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut received = Received {
        len: n as usize,
        from,
        from_len: msg.msg_namelen,
        kernel_time: None,
        software_time: None,
        ip_options: [0; MAX_IP_OPTIONS],
        ip_options_len: None,
    };
    let end = control.as_ptr() as usize + msg.msg_controllen as usize;
    // SAFETY: the CMSG macros walk the control buffer the kernel filled,
    // within `msg_controllen`; a message's data is read only where it lies
    // within both its `cmsg_len` and that buffer.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            let data = libc::CMSG_DATA(cmsg);
            let header = data as usize - cmsg as usize;
            let len = ((*cmsg).cmsg_len as usize).saturating_sub(header);
            if data as usize + len <= end {
                let (level, kind) = ((*cmsg).cmsg_level, (*cmsg).cmsg_type);
                let stamp = || {
                    (len >= size_of::<libc::timespec>())
                        .then(|| std::ptr::read_unaligned(data.cast::<libc::timespec>()))
                };
                if level == libc::SOL_SOCKET && kind == libc::SCM_TIMESTAMPNS {
                    received.kernel_time = stamp();
                } else if level == libc::SOL_SOCKET && kind == SO_TIMESTAMPING {
                    received.software_time = stamp();
                } else if level == libc::IPPROTO_IP && kind == libc::IP_RECVOPTS {
                    let n = len.min(MAX_IP_OPTIONS);
                    received.ip_options[..n].copy_from_slice(std::slice::from_raw_parts(data, n));
                    received.ip_options_len = Some(n);
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    Ok(received)
}

/// The IP address in `storage`, as `recvmsg` filled `len` bytes of it.
pub fn socket_addr(storage: &libc::sockaddr_storage, len: libc::socklen_t) -> Option<SocketAddr> {
    let len = len as usize;
    match libc::c_int::from(storage.ss_family) {
        libc::AF_INET if len >= size_of::<libc::sockaddr_in>() => {
            // SAFETY: the family says the storage holds a sockaddr_in.
            let a: libc::sockaddr_in = unsafe {
                std::ptr::read_unaligned((storage as *const libc::sockaddr_storage).cast())
            };
            Some(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)),
                u16::from_be(a.sin_port),
            )))
        }
        libc::AF_INET6 if len >= size_of::<libc::sockaddr_in6>() => {
            // SAFETY: the family says the storage holds a sockaddr_in6.
            let a: libc::sockaddr_in6 = unsafe {
                std::ptr::read_unaligned((storage as *const libc::sockaddr_storage).cast())
            };
            Some(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(a.sin6_addr.s6_addr),
                u16::from_be(a.sin6_port),
                a.sin6_flowinfo,
                a.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_datagram_with_its_sender_and_kernel_stamp() {
        let receiver = UdpSocket::bind("127.0.0.1:0").unwrap();
        let stamped = enable_receive_timestamps(receiver.as_raw_fd()).is_ok();
        let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        sender
            .send_to(b"hello", receiver.local_addr().unwrap())
            .unwrap();
        let mut buf = [0u8; 64];
        let r = receive(receiver.as_raw_fd(), &mut buf, 0).unwrap();
        assert_eq!(&buf[..r.len], b"hello");
        assert_eq!(r.source(), Some(sender.local_addr().unwrap()));
        assert!(r.ip_options().is_none(), "no options were asked for");
        if stamped {
            let at = r.kernel_time.map(|t| timespec_nanos(&t)).expect("a stamp");
            // The stamp is the arrival, after the send began, within a minute.
            let before = before.as_nanos() as i64;
            assert!(
                at >= before - 1_000_000 && at < before + 60_000_000_000,
                "{at} {before}"
            );
        }
        // Nothing more waiting: the system call's own error.
        receiver.set_nonblocking(true).unwrap();
        let e = receive(receiver.as_raw_fd(), &mut buf, 0).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
    }

    #[test]
    fn addresses_of_other_families_or_too_short_are_none() {
        // SAFETY: all-zero is a valid sockaddr_storage.
        let mut storage: libc::sockaddr_storage = unsafe { zeroed() };
        storage.ss_family = libc::AF_UNIX as libc::sa_family_t;
        assert_eq!(socket_addr(&storage, size_of_val(&storage) as _), None);
        storage.ss_family = libc::AF_INET as libc::sa_family_t;
        assert_eq!(socket_addr(&storage, 4), None);
        assert!(socket_addr(&storage, size_of_val(&storage) as _).is_some());
    }
}
