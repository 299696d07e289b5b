"""udp_once.py: receive one UDP datagram and print it (test_attach.sh: is
traffic that is not xroce's passed to the stack untouched?).  READY is
created once the socket is bound; gives up after 5 s.

  udp_once.py ADDR PORT READY"""
import socket
import sys

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
open(sys.argv[3], 'w').close()
s.settimeout(5)
sys.stdout.write(s.recv(100).decode())
